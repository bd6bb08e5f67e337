package org.holdfast.server.app;

import java.time.Clock;
import java.time.Duration;
import java.util.function.LongFunction;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.DamageAttribution;
import org.holdfast.server.verify.DamageReport;
import org.holdfast.server.verify.Verifier;
import org.holdfast.server.verify.VerifyJobs;
import org.holdfast.server.verify.VerifySettings;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

/**
 * Wires verification: the ledger, the verifier with its settings ({@code holdfast.verify.*}), its
 * jobs and schedule, the damage report, and the {@code integrity} health check. With the blocks on the
 * workers verify reads them from their owners as a restore does; the schedule runs as on a standalone server.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
@EnableConfigurationProperties(VerifyConfiguration.VerifyProperties.class)
public class VerifyConfiguration {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(VerifyConfiguration.class);
    /**
     * The health status of a component that needs attention while the server works (a bad block, failing
     * catalog backups, a paused GC); the overall status carries this description, so it names them all.
     */
    public static final Status DEGRADED = new Status("DEGRADED", "the server works, but a component needs attention:"
            + " integrity (damaged blocks), catalogBackup (catalog backups fail or are blocked) or gc (paused);"
            + " the server log says which and what to do, and /actuator/health lists the components with their"
            + " reason when management.endpoint.health.show-details is always");

    /**
     * Verify settings: reader {@code threads}, read {@code rate} (bytes per second, 0 for no limit),
     * the incremental {@code window} (blocks found sound more recently are skipped; 0 reads all) and
     * the {@code schedule} interval of full passes (0 for none).
     */
    @ConfigurationProperties("holdfast.verify")
    public record VerifyProperties(@DefaultValue("2") int threads, @DefaultValue("100MB") DataSize rate,
                                   @DefaultValue("30d") Duration window, @DefaultValue("7d") Duration schedule) {
        VerifySettings settings() {
            return new VerifySettings(threads, rate.toBytes(), window, schedule.isZero() ? null : schedule);
        }
    }

    @Bean
    VerifyLedger verifyLedger(MetadataDb db) {
        return new VerifyLedger(db);
    }

    /**
     * Reads the blocks where they live ({@link BlockHome}: with {@code holdfast.cluster.data=workers} from each range's
     * owner) and names a worker's blocks by its node and id in reports; bad-block marks stay the master's.
     */
    @Bean
    Verifier verifier(Catalog catalog, DataStore store, BlockHome home, ObjectProvider<WorkerRegistry> registry,
                      VerifyLedger ledger, VerifyProperties p, Clock holdfastClock) {
        WorkerRegistry workers = home.keepsBlocksOnWorkers() ? registry.getIfAvailable() : null;
        LongFunction<Verifier.BlockHolder> holders = workers == null ? pbn -> Verifier.BlockHolder.LOCAL : pbn -> holder(workers, pbn);
        return new Verifier(catalog, store, home, holders, ledger, p.settings(), holdfastClock);
    }

    /** The registered worker whose range holds {@code pbn} (connected or not: a down worker is who to bring back). */
    private static Verifier.BlockHolder holder(WorkerRegistry workers, long pbn) {
        for (WorkerView w : workers.workers()) {
            if (w.range().contains(pbn)) {
                return new Verifier.BlockHolder("data worker " + w.nodeName() + " (id " + w.workerId() + ", PBNs " + w.range() + ")",
                        w.range());
            }
        }
        return new Verifier.BlockHolder("no registered worker (PBN " + pbn + ")", new PbnRange(pbn, pbn + 1));
    }

    /** Closes (its schedule) before the job runner. */
    @Bean(destroyMethod = "close")
    VerifyJobs verifyJobs(Verifier verifier, Jobs jobs, DataDirectory dir) {
        VerifyJobs v = new VerifyJobs(verifier, jobs);
        v.startSchedule();
        v.passAfterCorruptFsck(GcJobs.FSCK);
        try {
            Job requested = v.passRequestedOffline(dir.root());
            if (requested != null) {
                LOG.info("running the verify pass the offline fsck requested (job {}): it flags the volumes that use the corrupt"
                        + " blocks it found, whose next backups repair them", requested.id());
            }
        } catch (RuntimeException e) {
            // an unreadable request must not keep the server from starting; the message says what to do instead
            LOG.error("the offline fsck's verify request cannot be run: {}", e.getMessage());
        }
        return v;
    }

    /** Also flags, at once, the snapshots that use a data log a read finds missing. */
    @Bean
    DamageReport damageReport(Catalog catalog, DataStore store, VerifyLedger ledger) {
        DamageAttribution.onMissingLogs(catalog, store, ledger);
        return new DamageReport(catalog, store.badBlocks(), ledger);
    }

    /** UP while no block is bad; else DEGRADED (HTTP 200) with the count, the flagged volumes and what to do. */
    @Bean
    HealthIndicator integrityHealthIndicator(DamageReport damage, ClusterDataMode dataMode) {
        // with the blocks on the workers a repair needs the block's worker up (cluster version 6): else only new snapshots are sound
        String action = dataMode == ClusterDataMode.WORKERS
                ? "back up the affected volumes from a healthy source: the bad blocks are repaired in place on their workers if those"
                        + " are up (else the new snapshots get sound copies), then verify (POST /api/v1/verify); see"
                        + " docs/operations.md, \"Data on workers (experimental)\""
                : "back up the affected volumes from a healthy source to repair the blocks in place, then verify"
                        + " (POST /api/v1/verify); see docs/operations.md, \"Verify\"";
        return () -> {
            int bad = damage.badBlocks().count();
            if (bad == 0) {
                return Health.up().withDetail("badBlocks", 0).build();
            }
            return Health.status(DEGRADED).withDetail("badBlocks", bad)
                    .withDetail("damagedVolumes", damage.damagedVolumes().stream().map(v -> v.volume()).toList())
                    .withDetail("action", action)
                    .build();
        };
    }
}
