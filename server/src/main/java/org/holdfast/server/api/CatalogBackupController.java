package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.catalog.CatalogBackupJobs;
import org.holdfast.server.catalog.CatalogBackupOffException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Online backups of the catalog (admin only): starts one as a job (202 with the job's URL) and lists
 * those in the backup directory. 409 {@code catalog-backup-off} while no backup directory is set.
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

    /** The backups, newest first: id, time, size, the snapshots the catalog held and the newest one's time. */
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
