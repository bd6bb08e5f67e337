package org.holdfast.server.app;

import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CatalogBackupJobs;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.MetadataDb;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Wires online catalog backups ({@code holdfast.catalog.backup.*}): only when a directory is set,
 * which must lie outside the data directory; then the jobs and their schedule.
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
                                        CatalogBackupProperties p) {
        CatalogBackupJobs j = new CatalogBackupJobs(backups, catalog, commit, jobs, p.keep());
        j.startSchedule(p.interval());
        return j;
    }
}
