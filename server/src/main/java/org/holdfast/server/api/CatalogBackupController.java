package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.catalog.CatalogBackupJobs;
import org.holdfast.server.catalog.CatalogBackupOffException;
import org.holdfast.server.store.UnknownCatalogBackupException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Online backups of the catalog (admin only): starts one as a job (202 with the job's URL; the job
 * verifies the backup it wrote), re-checks an older one as a job, and lists those in the backup
 * directory with their last verification. 409 {@code catalog-backup-off} while no backup directory
 * is set; 404 {@code unknown-catalog-backup} for an id that is not there.
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
public class CatalogBackupController {
    private final ObjectProvider<CatalogBackupJobs> backups;

    public CatalogBackupController(ObjectProvider<CatalogBackupJobs> backups) {
        this.backups = backups;
    }

    @PostMapping("/api/v1/catalog/backups")
    @Audited("catalog.backup")
    public ResponseEntity<JobView> start(HttpServletRequest request) {
        return JobController.accepted(backups().submit(Principals.name(request)));
    }

    /** Re-checks backup {@code id}: every file's size and the CRC32C of every byte, as a job; it fails if the backup is damaged. */
    @PostMapping("/api/v1/catalog/backups/{id}/verify")
    @Audited("catalog.backup.verify")
    public ResponseEntity<JobView> verify(@PathVariable String id, HttpServletRequest request) {
        if (!id.matches("[1-9][0-9]{0,8}")) {
            throw new UnknownCatalogBackupException("no catalog backup '" + id + "': ids are positive numbers;"
                    + " GET /api/v1/catalog/backups lists them");
        }
        return JobController.accepted(backups().verify(Integer.parseInt(id), Principals.name(request)));
    }

    /**
     * The backups, newest first: id, time, size, the snapshots the catalog held and the newest one's
     * time, and the last verification (null: never verified).
     */
    @GetMapping("/api/v1/catalog/backups")
    public List<CatalogBackupJobs.Listed> list() {
        return backups().list();
    }

    private CatalogBackupJobs backups() {
        CatalogBackupJobs b = backups.getIfAvailable();
        if (b == null) {
            throw new CatalogBackupOffException();
        }
        return b;
    }
}
