package org.holdfast.server.app;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.FsyncPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.gc.GcCommitHook;
import org.holdfast.server.gc.GcReferenceGuard;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

/**
 * Wires garbage collection ({@code holdfast.gc.*}): the GC service (opened, with log replay and
 * re-drive, before the ingest binds; closed before the metadata database), its commit hook and
 * reference guard (picked up by {@link CoreConfiguration}), and the periodic cycle.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(GcConfiguration.GcProperties.class)
public class GcConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(GcConfiguration.class);

    /**
     * GC settings: grace for backups in progress, default retention, cycle interval, BOSC tuning,
     * and compaction after each sweep (threshold of live share, 0 = off; live bytes copied per run at most).
     */
    @ConfigurationProperties("holdfast.gc")
    public record GcProperties(
            @DefaultValue("24h") Duration grace,
            @DefaultValue("30d") String defaultRetention,
            @DefaultValue("1h") Duration interval,
            @DefaultValue("2") int committers,
            @DefaultValue("EVERY_BATCH") FsyncPolicy fsync,
            @DefaultValue("64") int sweepBatchChunks,
            @DefaultValue("0.5") double compactionThreshold,
            @DefaultValue("64GB") DataSize compactionMaxBytes) {
    }

    @Bean(destroyMethod = "close")
    GcService gcService(GcProperties p, DataDirectory dir, MetadataDb db, Catalog catalog, DataStore dataStore,
                        FingerprintIndex index, Clock holdfastClock, ObjectProvider<SnapshotCommit> commits) {
        BoscSettings bosc = BoscSettings.defaults().withCommitters(p.committers()).withFsync(p.fsync(), Duration.ofMillis(100));
        return GcService.open(new GcService.Settings(dir.subdirectory("gc"), bosc, p.grace(), p.defaultRetention(),
                p.sweepBatchChunks(), p.compactionThreshold(), p.compactionMaxBytes().toBytes()), catalog, dataStore, index, holdfastClock, commits::getObject);
    }

    @Bean
    GcCommitHook gcCommitHook(GcService gc) {
        return new GcCommitHook(gc);
    }

    @Bean
    GcReferenceGuard gcReferenceGuard(GcService gc) {
        return new GcReferenceGuard(gc.guard());
    }

    /** Volume deletion takes the ingest's per-volume lock: refused while a backup holds it, and none can start. */
    @Bean
    VolumeGate volumeGate(IngestServer ingest) {
        long owner = Long.MIN_VALUE; // no session has this id
        return new VolumeGate() {
            @Override
            public boolean tryExclude(String volume) {
                return ingest.volumeLocks().tryLock(volume, owner);
            }

            @Override
            public void release(String volume) {
                ingest.volumeLocks().unlock(volume, owner);
            }
        };
    }

    @Bean
    GcSchedule gcSchedule(GcService gc, GcProperties p) {
        return new GcSchedule(gc, p.interval());
    }

    /** Runs a GC cycle every interval, starting one interval after startup; stops before the stores close. */
    static final class GcSchedule implements SmartLifecycle {
        private final GcService gc;
        private final Duration interval;
        private ScheduledExecutorService executor;

        GcSchedule(GcService gc, Duration interval) {
            this.gc = gc;
            this.interval = interval;
        }

        @Override
        public synchronized void start() {
            executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "gc-cycle");
                t.setDaemon(true);
                return t;
            });
            long ms = Math.max(1000, interval.toMillis());
            executor.scheduleWithFixedDelay(() -> {
                try {
                    GcService.CycleReport r = gc.runCycle();
                    LOG.info("gc cycle: {} snapshots deleted, {} map entries pruned, {} blocks freed",
                            r.snapshotsDeleted(), r.mapEntriesPruned(), r.sweep().freed());
                } catch (RuntimeException e) {
                    LOG.error("gc cycle failed; will retry next interval", e);
                }
            }, ms, ms, TimeUnit.MILLISECONDS);
        }

        @Override
        public synchronized void stop() {
            if (executor != null) {
                executor.shutdown();
                try {
                    executor.awaitTermination(1, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                executor = null;
            }
        }

        @Override
        public synchronized boolean isRunning() {
            return executor != null;
        }

        /** Stops with the ingest, before any store bean is destroyed. */
        @Override
        public int getPhase() {
            return Integer.MAX_VALUE - 4096;
        }
    }
}
