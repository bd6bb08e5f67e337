package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.cluster.UnknownWorkerException;
import org.holdfast.server.gc.ClusterCountsCheck;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The online fsck of a data=workers cluster ({@link ClusterCountsCheck}), on the GC test classes'
 * shared cluster (a master and two workers over real sockets, RocksDB and GC metadata on disk): a
 * clean cluster is clean on every worker, through the fsck job as through the check itself; a count
 * altered by hand on one worker's GC metadata is found on that worker, by PBN and direction (over-count
 * a leak, under-count a risk of loss), and the check changes nothing; a worker of an older version,
 * one not connected and one lost in the middle are each reported not checked while the others are
 * checked; an unknown worker is refused before a job is queued.
 */
@ExtendWith(SharedGcCluster.class)
class ClusterCountsCheckTest {
    private static DataOnWorkersCluster cluster;

    @BeforeAll
    static void cluster(DataOnWorkersCluster shared) throws Exception {
        cluster = shared;
        cluster.gcCycle(); // the shared cluster: no snapshot past the retention left by another class
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("counts-a", DataOnWorkersCluster.random(11, 48), DataOnWorkersCluster.BS, true);
            agent.backup("counts-b", DataOnWorkersCluster.random(12, 48), DataOnWorkersCluster.BS, true);
        }
        cluster.awaitDeltasDelivered();
    }

    private static ConfigurableApplicationContext master() {
        return cluster.master();
    }

    private static ClusterCountsCheck.Report check() {
        return master().getBean(ClusterCountsCheck.class).run(System.currentTimeMillis(), JobContext.NONE);
    }

    @Test
    void fsckJob_cleanCluster_everyWorkerCheckedNoMismatch() {
        Jobs jobs = master().getBean(Jobs.class);
        Job queued = master().getBean(GcJobs.class).fsck("test");
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.get(queued.id()).state() == JobState.SUCCEEDED
                || jobs.get(queued.id()).state() == JobState.FAILED);
        Job done = jobs.get(queued.id());
        assertThat(done.state()).as(String.valueOf(done.error())).isEqualTo(JobState.SUCCEEDED);
        assertThat(done.result()).containsEntry("clean", true).containsEntry("dataLoss", false).containsEntry("workersChecked", 2L)
                .containsEntry("workersNotChecked", 0L).containsEntry("mismatches", 0L);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> workers = (List<Map<String, Object>>) done.result().get("workers");
        long blocks = workers.stream().mapToLong(w -> (Long) w.get("blocksChecked")).sum();
        assertThat(blocks).as("the 96 blocks just backed up, and whatever the other classes keep").isGreaterThanOrEqualTo(96);
        assertThat(workers).allSatisfy(w -> assertThat(w.get("state")).isEqualTo("checked"));
        assertThat(done.log()).anyMatch(l -> l.contains("fsck of the workers' GC counts: clean, 2 workers checked"));
        assertThat(done.progress().bytesDone()).as("spans sent").isPositive();
    }

    @Test
    void check_countAlteredOnOneWorker_foundThereWithItsDirectionAndNothingChanged() {
        ConfigurableApplicationContext worker = cluster.workers().get(0);
        long workerId = cluster.workerId(0);
        BoscPipeline gma = worker.getBean(WorkerGcMetadata.class).pipeline();
        long[] two = referencedOn(worker.getBean(WorkerConnector.class).status().assignment().range(), 2);
        long logged = gma.updatesLogged();
        long lastOp = master().getBean(GcService.class).lastAppliedOp();
        // by hand, beside the deltas: one block counted once too often, one once too few
        gma.appendSingle(GmaChunk.UpdateKinds.RC_ADD, two[0], 1);
        gma.appendSingle(GmaChunk.UpdateKinds.RC_ADD, two[1], -1);
        try {
            ClusterCountsCheck.Report r = check();
            assertThat(r.clean()).isFalse();
            assertThat(r.dataLoss()).as("every block still held").isFalse();
            ClusterCountsCheck.WorkerResult bad = r.workers().stream().filter(w -> w.workerId() == workerId).findFirst().orElseThrow();
            assertThat(bad.rcAbove()).as("over-count: a leak").isEqualTo(1);
            assertThat(bad.rcBelow()).as("under-count: risk of loss").isEqualTo(1);
            assertThat(bad.pinsDiffer()).isZero();
            assertThat(bad.notHeld()).isZero();
            assertThat(bad.samples()).contains("PBN " + two[0] + ": RC above the catalog's (leak)",
                    "PBN " + two[1] + ": RC below the catalog's (risk of loss)");
            assertThat(r.workers()).filteredOn(w -> w.workerId() != workerId).allSatisfy(w -> assertThat(w.clean()).isTrue());
            assertThat(gma.updatesLogged()).as("the check logged nothing on the worker").isEqualTo(logged + 2);
            assertThat(master().getBean(GcService.class).lastAppliedOp()).as("nor any GC operation on the master").isEqualTo(lastOp);
        } finally {
            gma.appendSingle(GmaChunk.UpdateKinds.RC_ADD, two[0], -1);
            gma.appendSingle(GmaChunk.UpdateKinds.RC_ADD, two[1], 1);
        }
        assertThat(check().clean()).as("put back by hand: clean again").isTrue();
    }

    @Test
    void check_olderDownAndLostWorkers_reportedNotCheckedTheOthersChecked() {
        ClusterServer server = master().getBean(ClusterServer.class);
        GcDeltaSenders senders = master().getBean(GcDeltaSenders.class);
        long w0 = cluster.workerId(0);
        long w1 = cluster.workerId(1);
        MasterCountsLinks real = new MasterCountsLinks(server, senders);
        ClusterCountsCheck.Links links = new ClusterCountsCheck.Links() {
            @Override
            public ClusterCountsCheck.Remote counts(long workerId) {
                return workerId == w1 ? null : real.counts(workerId); // worker 1 plays one registered at version 6: no counts check end
            }

            @Override
            public boolean connected(long workerId) {
                return real.connected(workerId);
            }

            @Override
            public long pending(long workerId) {
                return real.pending(workerId);
            }
        };
        ClusterCountsCheck older = checker(links);
        ClusterCountsCheck.Report r = older.run(System.currentTimeMillis(), JobContext.NONE);
        assertThat(r.workersChecked()).isEqualTo(1);
        assertThat(r.workersNotChecked()).isEqualTo(1);
        assertThat(r.clean()).as("a worker not checked is not clean").isFalse();
        ClusterCountsCheck.WorkerResult v6 = r.workers().stream().filter(w -> w.workerId() == w1).findFirst().orElseThrow();
        assertThat(v6.state()).isEqualTo(ClusterCountsCheck.State.NOT_CHECKED);
        assertThat(v6.why()).contains("needs cluster version 7");
        assertThat(r.workers().stream().filter(w -> w.workerId() == w0).findFirst().orElseThrow().clean()).isTrue();

        // not connected at all, and lost after the first span: reported, no hang
        ClusterCountsCheck.Links downAndLost = new ClusterCountsCheck.Links() {
            @Override
            public ClusterCountsCheck.Remote counts(long workerId) {
                return workerId == w1 ? null : (first, limit, now, pbns, rc, pins, et) -> CompletableFuture.failedFuture(
                        new RangeWorkerLostException("its link closed"));
            }

            @Override
            public boolean connected(long workerId) {
                return workerId != w1;
            }

            @Override
            public long pending(long workerId) {
                return senders.pending(workerId);
            }
        };
        long started = System.nanoTime();
        ClusterCountsCheck.Report gone = checker(downAndLost).run(System.currentTimeMillis(), JobContext.NONE);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
        assertThat(gone.workersChecked()).isZero();
        assertThat(gone.workers()).extracting(ClusterCountsCheck.WorkerResult::why).anyMatch(w -> w.contains("not connected"))
                .anyMatch(w -> w.contains("lost during the check: its link closed"));
    }

    @Test
    void fsckJob_unknownWorker_refusedBeforeAJobIsQueued() {
        GcJobs jobs = master().getBean(GcJobs.class);
        assertThatThrownBy(() -> jobs.fsck("test", 9_999L)).isInstanceOf(UnknownWorkerException.class)
                .hasMessageContaining("no worker with id 9999");
    }

    private static ClusterCountsCheck checker(ClusterCountsCheck.Links links) {
        return new ClusterCountsCheck(master().getBean(Catalog.class), master().getBean(GcService.class),
                () -> master().getBean(SnapshotCommit.class), links, 128, Duration.ofSeconds(10));
    }

    /** {@code n} distinct PBNs of {@code range} that the newest snapshots reference. */
    private static long[] referencedOn(PbnRange range, int n) {
        Catalog catalog = master().getBean(Catalog.class);
        List<Long> found = new ArrayList<>();
        for (VolumeRecord v : catalog.volumes()) {
            if (!v.name().name().startsWith("counts-")) {
                continue;
            }
            catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
                if (pbn >= range.first() && pbn < range.limit() && !found.contains(pbn) && found.size() < n) {
                    found.add(pbn);
                }
                return found.size() < n;
            });
        }
        assertThat(found).as("blocks of the test's volumes on " + range).hasSize(n);
        return found.stream().mapToLong(Long::longValue).toArray();
    }
}
