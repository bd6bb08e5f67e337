package org.holdfast.server.app;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.FsyncPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.gc.GcCommitHook;
import org.holdfast.server.gc.GcReferenceGuard;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.GcDeltaSenders;
import org.holdfast.server.ingest.cluster.RangeReferenceGuard;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Wires garbage collection ({@code holdfast.gc.*}): the GC service (opened, with log replay and
 * re-drive, before the ingest binds; closed before the metadata database), its commit hook and
 * reference guard (picked up by {@link CoreConfiguration}), and the periodic cycle. With
 * {@code holdfast.gc.bookkeeping=off} (see {@link GcBookkeepingMode}) the hook, the guard and the
 * cycle are left out and the GC endpoints are refused.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
@EnableConfigurationProperties(GcConfiguration.GcProperties.class)
public class GcConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(GcConfiguration.class);

    /**
     * GC settings: grace for backups in progress, default retention, cycle interval, BOSC tuning,
     * compaction after each sweep (threshold of live share, 0 = off; live bytes copied per run at most),
     * reclaim-now's compaction threshold (the higher of it and the cycle's applies), and whether bookkeeping runs at all (fixed per store).
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
            @DefaultValue("64GB") DataSize compactionMaxBytes,
            @DefaultValue("0.95") double reclaimCompactionThreshold,
            @DefaultValue("on") String bookkeeping) {
        public GcProperties {
            GcBookkeepingMode.parse(bookkeeping);
        }
    }

    /**
     * The bookkeeping mode, checked against (and for a new store recorded in) the catalog before the
     * GC opens: a store keeps the mode it was created with.
     */
    @Bean
    GcBookkeepingMode gcBookkeepingMode(GcProperties p, MetadataDb db) {
        GcBookkeepingMode mode = GcBookkeepingMode.settle(GcBookkeepingMode.parse(p.bookkeeping()), db);
        if (mode == GcBookkeepingMode.OFF) {
            LOG.warn("*****************************************************************************************");
            LOG.warn("GC BOOKKEEPING IS OFF (holdfast.gc.bookkeeping=off): for benchmarking only. Snapshot commits");
            LOG.warn("are not counted, nothing is ever garbage-collected, retention and holds do nothing, and the");
            LOG.warn("GC endpoints answer 409. This data directory can never be started with bookkeeping on.");
            LOG.warn("*****************************************************************************************");
        }
        return mode;
    }

    @Bean(destroyMethod = "close")
    GcService gcService(GcProperties p, DataDirectory dir, MetadataDb db, Catalog catalog, DataStore dataStore,
                        FingerprintIndex index, Clock holdfastClock, ObjectProvider<SnapshotCommit> commits,
                        GcBookkeepingMode mode, ClusterDataMode dataMode, ObjectProvider<GcDeltaSenders> senders) {
        // mode is only a dependency: it must be settled (or refused) before the GC directory opens
        // blocks on workers: each operation's updates are routed to the owners of their PBNs (distributed GC)
        GcDeltaSenders routing = dataMode == ClusterDataMode.WORKERS ? senders.getObject() : null;
        GcService gc = GcService.open(new GcService.Settings(dir.subdirectory("gc"), bosc(p), p.grace(), p.defaultRetention(),
                p.sweepBatchChunks(), p.compactionThreshold(), p.compactionMaxBytes().toBytes(), p.reclaimCompactionThreshold()),
                catalog, dataStore, index, holdfastClock,
                commits::getObject, routing);
        if (routing != null) {
            routing.start(); // after the re-drive: it may have written entries
        }
        return gc;
    }

    /** The BOSC pipeline's settings from {@code holdfast.gc.*}: the standalone GC's and a worker's GC metadata's. */
    static BoscSettings bosc(GcProperties p) {
        return BoscSettings.defaults().withCommitters(p.committers()).withFsync(p.fsync(), Duration.ofMillis(100));
    }

    /** Off: no hook, so commits are not counted. */
    @Bean
    CommitHook gcCommitHook(GcService gc, GcBookkeepingMode mode) {
        return mode == GcBookkeepingMode.ON ? new GcCommitHook(gc) : CommitHook.NONE;
    }

    /**
     * Off: no protection of the blocks of backups in progress (nothing is ever swept). With blocks on
     * workers, each PBN is protected by its owner's guard (the worker sweeps its own range), the
     * master's own range by the master's.
     */
    @Bean
    ReferenceGuard gcReferenceGuard(GcService gc, GcBookkeepingMode mode, ClusterDataMode dataMode,
                                    ObjectProvider<ClusterServer> server, ObjectProvider<GcDeltaSenders> senders) {
        if (mode != GcBookkeepingMode.ON) {
            return ReferenceGuard.NONE;
        }
        if (dataMode == ClusterDataMode.WORKERS) {
            GcDeltaSenders routes = senders.getObject();
            // a committed session ends on a worker once its counts are there: in its outbox (bookkeeping not
            // paused, else once it resumed: the commit's counts may be routed only by the re-drive), then acknowledged
            RangeReferenceGuard.CountsDelivered delivered = (range, then) -> gc.whenBookkeepingHealthy(() -> routes.after(range, then));
            return new RangeReferenceGuard(routes.ownRange(), new GcReferenceGuard(gc), server.getObject().gcGuards(), delivered);
        }
        return new GcReferenceGuard(gc);
    }

    /** Off: every GC endpoint answers 409 before the GC service is touched. */
    @Bean
    WebMvcConfigurer gcOffEndpoints(GcBookkeepingMode mode) {
        return new WebMvcConfigurer() {
            @Override
            public void addInterceptors(InterceptorRegistry registry) {
                if (mode == GcBookkeepingMode.OFF) {
                    registry.addInterceptor(RefusedEndpoints.gcOff());
                }
            }
        };
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
    GcSchedule gcSchedule(GcJobs gcJobs, Jobs jobs, GcService gc, GcProperties p, GcBookkeepingMode mode, AuditLog audit) {
        return new GcSchedule(gcJobs, jobs, gc, p.interval(), mode == GcBookkeepingMode.ON, audit);
    }

    /**
     * Submits a GC cycle job (submitted by {@code schedule}) every interval, starting one interval
     * after startup, and waits for it to end before the next interval starts counting, so scheduled
     * runs never pile up in the GC lane; stops (cancelling its job at a safe point) before the stores close.
     */
    static final class GcSchedule extends ScheduledLifecycle {
        private final GcJobs gcJobs;
        private final Jobs jobs;
        private final GcService gc;
        private final Duration interval;
        private final boolean enabled;
        private final AuditLog audit;
        private volatile Job current;

        GcSchedule(GcJobs gcJobs, Jobs jobs, GcService gc, Duration interval, boolean enabled, AuditLog audit) {
            super("gc-schedule");
            this.gcJobs = gcJobs;
            this.jobs = jobs;
            this.gc = gc;
            this.audit = audit;
            this.interval = interval;
            this.enabled = enabled;
        }

        @Override
        ScheduledExecutorService schedule() {
            if (!enabled) {
                return null; // bookkeeping off: never run a cycle (it would sweep uncounted blocks)
            }
            // volumes that follow a named policy get its text (a crash may have interrupted an update,
            // or the configured default changed); not in GcService.open: the commit path is not wired yet
            gc.namedPolicies().reconcile();
            ScheduledExecutorService executor = newScheduler();
            long ms = Math.max(1000, interval.toMillis());
            executor.scheduleWithFixedDelay(this::runOnce, ms, ms, TimeUnit.MILLISECONDS);
            return executor;
        }

        private void runOnce() {
            Job ended;
            try {
                Job queued = gcJobs.cycle("schedule", this::report);
                current = queued;
                ended = jobs.await(queued.id(), Duration.ofDays(365));
            } catch (RuntimeException e) {
                LOG.error("gc cycle could not be started; will retry next interval", e);
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                current = null;
            }
            if (ended.state() == JobState.FAILED) {
                LOG.error("gc cycle (job {}) failed; will retry next interval: {}", ended.id(), ended.error());
                audit.record(new AuditEvent(System.currentTimeMillis(), "system", "local", "gc.run", "",
                        "failed", String.valueOf(ended.error())));
            } else if (ended.state() == JobState.CANCELLED) {
                LOG.info("gc cycle (job {}) cancelled: {}", ended.id(), ended.error());
            }
        }

        /** Runs in the job, after the cycle. */
        private void report(GcService.CycleReport r) {
            audit.record(new AuditEvent(r.now(), "system", "local", "gc.run", "", "ok", r.snapshotsDeleted()
                    + " snapshots deleted, " + r.sweep().freed() + " blocks freed (scheduled)"));
            LOG.info("gc cycle: {} snapshots deleted, {} map entries pruned, {} blocks freed",
                    r.snapshotsDeleted(), r.mapEntriesPruned(), r.sweep().freed());
            if (r.sweep().now() < r.now()) {
                LOG.info("gc cycle: the sweep was held back to {} by a backup open for longer than the grace"
                        + " ({} open sessions); its blocks stay protected until it ends",
                        java.time.Instant.ofEpochMilli(r.sweep().now()), gc.guard().openSessions());
            }
        }

        /** Cancels the cycle running now (at a safe point), so that stopping need not wait for all of it. */
        @Override
        void stopping() {
            Job j = current;
            if (j != null) {
                try {
                    jobs.cancel(j.id(), "the server stopping");
                } catch (RuntimeException e) {
                    // it ended meanwhile
                }
            }
        }
    }
}
