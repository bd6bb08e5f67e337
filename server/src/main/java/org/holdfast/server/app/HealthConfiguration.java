package org.holdfast.server.app;

import java.io.File;
import java.util.List;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.store.CatalogHealth;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.MetadataDb;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.metrics.system.DiskSpaceMetricsBinder;
import org.springframework.boot.actuate.system.DiskSpaceHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

/**
 * The health components of the stores: {@code catalog} (DOWN while a RocksDB background error has
 * stopped it taking writes) and {@code gc} (DEGRADED while GC updates wait for a disk that cannot
 * take them, or bookkeeping is paused; backups still commit; not on a worker), and the disk space
 * check and metric, both measured at the data directory (Spring Boot's defaults measure the working
 * directory, which is often another file system). Each says why and what to do.
 */
@Configuration(proxyBeanMethods = false)
public class HealthConfiguration {

    @Bean
    HealthIndicator catalogHealthIndicator(MetadataDb db) {
        return () -> {
            String stopped = db.health().stoppedReason();
            if (stopped == null) {
                return Health.up().withDetail("backgroundErrors", db.health().backgroundErrors()).build();
            }
            return Health.down().withDetail("reason", "the catalog database stopped taking writes: " + stopped)
                    .withDetail("action", CatalogHealth.ACTION).build();
        };
    }

    /** The health check's disk space, at the data directory; DOWN below the free space the store keeps in reserve. */
    @Bean
    DiskSpaceHealthIndicator diskSpaceHealthIndicator(DataDirectory dir, HoldfastProperties props) {
        return new DiskSpaceHealthIndicator(dir.root().toFile(), DataSize.ofBytes(Math.max(1, props.store().minFreeSpace().toBytes())));
    }

    /** {@code disk.free} and {@code disk.total}, tagged with the data directory's path. */
    @Bean
    DiskSpaceMetricsBinder diskSpaceMetrics(DataDirectory dir) {
        return new DiskSpaceMetricsBinder(List.of(new File(dir.root().toString())), List.of());
    }

    /** Not on a worker: it runs no GC. */
    @Bean
    @Conditional(OnStandaloneOrMaster.class)
    HealthIndicator gcHealthIndicator(GcService gc) {
        return () -> {
            RuntimeException paused = gc.failure();
            RuntimeException pipeline = gc.pipelineProblem();
            if (paused == null && pipeline == null) {
                return Health.up().build();
            }
            RuntimeException why = pipeline != null ? pipeline : paused;
            return Health.status(VerifyConfiguration.DEGRADED).withDetail("reason", "GC is paused: " + why.getMessage())
                    .withDetail("action", "backups still commit; GC resumes by itself once its files can be written: free space"
                            + " on the data disk; if it does not resume, restart the server (docs/operations.md, \"Disk full\")")
                    .build();
        };
    }
}
