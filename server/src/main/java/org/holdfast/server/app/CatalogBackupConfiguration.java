package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CatalogBackupJobs;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataLogsInBucket;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Wires online catalog backups ({@code holdfast.catalog.backup.*}): only when a directory is set,
 * which must lie outside the data directory; then the jobs and their schedule, the
 * {@code catalogBackup} health component and the {@code holdfast.catalog.backup.*} metrics.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
@EnableConfigurationProperties(CatalogBackupConfiguration.CatalogBackupProperties.class)
public class CatalogBackupConfiguration {

    /**
     * Where backups go ({@code directory}, none: off), how many are kept ({@code keep}) and how often
     * one runs ({@code interval}, none or 0: only on demand).
     */
    @ConfigurationProperties("holdfast.catalog.backup")
    public record CatalogBackupProperties(Path directory, @DefaultValue("7") int keep, Duration interval) {
    }

    /**
     * Closed after the jobs bean and before the catalog ({@code db} is here for that order: Spring
     * destroys dependents first); its close waits for a backup that is still copying.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(prefix = "holdfast.catalog.backup", name = "directory")
    CatalogBackups catalogBackups(DataDirectory dir, MetadataDb db, CatalogBackupProperties p) {
        if (p.directory() == null || p.directory().toString().isBlank()) {
            // an empty value would be the working directory: refuse it rather than back up there
            throw new IllegalArgumentException("holdfast.catalog.backup.directory is set but empty: give a directory on another disk,"
                    + " or remove the setting to turn catalog backups off");
        }
        return CatalogBackups.openBeside(dir.root(), p.directory());
    }

    /** Closes (its schedule) before the job runner and the backups. */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(prefix = "holdfast.catalog.backup", name = "directory")
    CatalogBackupJobs catalogBackupJobs(CatalogBackups backups, Catalog catalog, SnapshotCommit commit, Jobs jobs,
                                        CatalogBackupProperties p, AuditLog audit, ObjectProvider<DataStore> store,
                                        HoldfastProperties props) {
        // backend s3: the backup waits for the data log uploads while they get through
        CatalogBackupJobs j = new CatalogBackupJobs(backups, catalog, commit, jobs, p.keep(), audit,
                new DataLogsInBucket(store.getIfAvailable(), props.store().s3().uploadStallTimeout()));
        j.startSchedule(p.interval());
        return j;
    }

    /**
     * UP while the last backup wrote and verified sound, no kept backup is known damaged and no symbolic
     * link in the backup directory stops them (which the reason then names); else
     * DEGRADED (HTTP 200: the server itself works, but the copy that would recover it may not) with why and what to do.
     */
    @Bean
    @ConditionalOnProperty(prefix = "holdfast.catalog.backup", name = "directory")
    HealthIndicator catalogBackupHealthIndicator(CatalogBackupJobs jobs, CatalogBackups backups) {
        return () -> {
            CatalogBackupJobs.Failure failed = jobs.lastFailure();
            long damaged = jobs.damagedBackups();
            String linked = linkProblem(backups);
            if (failed == null && damaged == 0 && linked == null) {
                return Health.up().build();
            }
            Health.Builder h = Health.status(VerifyConfiguration.DEGRADED).withDetail("damagedBackups", damaged);
            if (linked != null) {
                // stops every backup until removed: said before any job has failed on it
                return h.withDetail("reason", linked).withDetail("action", "remove the link (if it replaced a directory,"
                        + " move that directory back in its place), then take a backup (POST /api/v1/catalog/backups);"
                        + " no restart needed").build();
            }
            if (failed != null) {
                h.withDetail("reason", "the last " + failed.kind() + " job failed at " + failed.at() + ": " + failed.message());
            }
            return h.withDetail("action", "see GET /api/v1/catalog/backups and the failed job; take a new backup once its cause"
                    + " is fixed (docs/operations.md, \"Back up the catalog, and recover a lost server\")").build();
        };
    }

    @Bean
    @ConditionalOnProperty(prefix = "holdfast.catalog.backup", name = "directory")
    MeterBinder catalogBackupMetrics(CatalogBackupJobs jobs, CatalogBackups backups) {
        return r -> {
            Gauge.builder("holdfast.catalog.backup.blocked", backups, b -> linkProblem(b) == null ? 0 : 1)
                    .description("1 while a symbolic link in the catalog backup directory stops every backup (the health"
                            + " check names it), else 0").register(r);
            FunctionCounter.builder("holdfast.catalog.backup.failures", jobs, CatalogBackupJobs::failuresTotal)
                    .description("catalog backup and verification jobs that failed since start (a full backup disk, a damaged backup)")
                    .register(r);
            Gauge.builder("holdfast.catalog.backup.damaged", jobs, CatalogBackupJobs::damagedBackups)
                    .description("kept catalog backups whose last verification found damage").register(r);
            Gauge.builder("holdfast.catalog.backup.last.verified.seconds", jobs, j -> j.lastSoundMillis() / 1000.0)
                    .description("when the last catalog backup was written and verified sound, epoch seconds (0: none since start)")
                    .register(r);
        };
    }

    /** The link that stops the catalog backups, in words; null if none (a directory that cannot be read is said too). */
    private static String linkProblem(CatalogBackups backups) {
        try {
            return backups.linkProblem();
        } catch (RuntimeException e) {
            return e.getMessage();
        }
    }
}
