package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
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
import org.holdfast.server.jobs.CancelAfterChecks;
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
 * checked; an unknown worker is refused before a job is queued. The commit monitor is held per
 * window: a backup committed in the middle of a check of small windows commits before the check ends
 * and the result stays clean; altered counts give the same result in small windows as in one; an
 * over-count above the catalog's highest PBN is found up to the worker's PBN floor.
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
        assertThat(workers).as("one hold of the commit lock per window, reported").allSatisfy(w -> {
            assertThat((Long) w.get("windows")).isPositive();
            assertThat((Long) w.get("longestHoldMillis")).isNotNegative();
        });
        assertThat(done.result()).containsKey("longestHoldMillis");
        assertThat(done.log()).anyMatch(l -> l.contains(" windows, commit lock held at most "));
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
            ClusterCountsCheck.WorkerResult small = checker(realLinks(), 16).runOne(workerId, System.currentTimeMillis(), JobContext.NONE)
                    .workers().get(0);
            assertThat(small.windows()).as("windows of 16 PBNs").isGreaterThan(1);
            assertThat(List.of(small.rcAbove(), small.rcBelow(), small.pinsDiffer(), small.notHeld(), small.blocksChecked()))
                    .as("the same result in many windows as in one").isEqualTo(List.of(1L, 1L, 0L, 0L, bad.blocksChecked()));
            assertThat(small.samples()).containsExactlyInAnyOrderElementsOf(bad.samples());
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
        GcDeltaSenders senders = master().getBean(GcDeltaSenders.class);
        long w0 = cluster.workerId(0);
        long w1 = cluster.workerId(1);
        // worker 1 plays one registered at version 6: no counts check end
        ClusterCountsCheck older = checker(links(realLinks(), (id, r) -> id == w1 ? null : r, -1));
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
    void check_commitDuringAMultiWindowCheck_committedBetweenWindowsAndTheResultStaysClean() throws Exception {
        // the worker with the most blocks, in windows of 8 PBNs: many holds of the commit monitor
        int i = referencedPast(range(0)) - range(0).first() >= referencedPast(range(1)) - range(1).first() ? 0 : 1;
        long workerId = cluster.workerId(i);
        Object monitor = master().getBean(SnapshotCommit.class);
        // half of it dedups against counts-a (references added to PBNs of windows checked or not yet), half is new (above them)
        byte[] image = new byte[48 * DataOnWorkersCluster.BS];
        System.arraycopy(DataOnWorkersCluster.random(11, 24), 0, image, 0, 24 * DataOnWorkersCluster.BS);
        System.arraycopy(DataOnWorkersCluster.random(13, 24), 0, image, 24 * DataOnWorkersCluster.BS, 24 * DataOnWorkersCluster.BS);
        CompletableFuture<Long> committed = new CompletableFuture<>();
        AtomicLong spansAfterCommit = new AtomicLong();
        AtomicLong spans = new AtomicLong();
        ClusterCountsCheck.Links links = links(realLinks(), (id, real) -> (first, limit, now, pbns, rc, pins, et) -> {
            if (spans.getAndIncrement() == 0) {
                Thread backup = new Thread(() -> {
                    try (AgentDriver agent = cluster.agent()) {
                        agent.backup("counts-c", image, DataOnWorkersCluster.BS, true);
                        committed.complete(System.nanoTime());
                    } catch (Throwable t) {
                        committed.completeExceptionally(t);
                    }
                }, "counts-c backup");
                backup.start();
            }
            if (committed.isDone()) {
                spansAfterCommit.incrementAndGet();
            } else {
                // this window holds the monitor: go on once the backup waits for it (its upload needs no monitor)
                await().atMost(Duration.ofSeconds(60)).until(() -> someoneWaitsFor(monitor) || committed.isDone());
            }
            return real.check(first, limit, now, pbns, rc, pins, et);
        }, -1);
        CancelAfterChecks job = CancelAfterChecks.never();
        ClusterCountsCheck.Report r = checker(links, 8, Duration.ofMillis(1)).runOne(workerId, System.currentTimeMillis(), job);
        long ended = System.nanoTime();
        long at = committed.get(60, java.util.concurrent.TimeUnit.SECONDS);
        ClusterCountsCheck.WorkerResult w = r.workers().get(0);
        assertThat(at).as("the backup committed before the check of its worker ended").isLessThan(ended);
        assertThat(spansAfterCommit.get()).as("windows compared after the commit").isPositive();
        assertThat(w.state()).as(String.valueOf(w.why())).isEqualTo(ClusterCountsCheck.State.CHECKED);
        assertThat(w.clean()).as("a commit between windows cannot make a checked window wrong: " + w.samples()).isTrue();
        assertThat(w.windows()).as("one hold per window").isGreaterThan(2);
        assertThat(w.longestHoldMillis()).as("the first window waited for the backup").isPositive();
        assertThat(r.longestHoldMillis()).isEqualTo(w.longestHoldMillis());
        assertThat(job.checks()).as("a cancel is asked for between windows").isGreaterThanOrEqualTo((int) w.windows() - 1);
        assertThat(job.lines()).as("a hold over the bound is logged with its time").anyMatch(l -> l.contains("held the commit lock for")
                && l.contains("(over 1 ms)"));
        cluster.awaitDeltasDelivered();
        assertThat(check().clean()).as("and the whole cluster in one window per worker").isTrue();
    }

    @Test
    void check_leakAboveTheCatalogsHighestPbn_foundUpToTheWorkersFloor() {
        ConfigurableApplicationContext worker = cluster.workers().get(0);
        long workerId = cluster.workerId(0);
        PbnRange range = range(0);
        BoscPipeline gma = worker.getBean(WorkerGcMetadata.class).pipeline();
        MasterCountsLinks real = realLinks();
        long top = referencedPast(range);
        assertThat(real.handedOutPast(workerId)).as("the master knows the worker handed out every PBN the catalog names")
                .isGreaterThanOrEqualTo(top);
        long leak = top + 1; // above every PBN the catalog references: no window of the catalog's reaches it
        gma.appendSingle(GmaChunk.UpdateKinds.RC_ADD, leak, 1);
        try {
            ClusterCountsCheck.WorkerResult found = checker(links(real, (id, r) -> r, Math.max(real.handedOutPast(workerId), leak + 2)), 8)
                    .runOne(workerId, System.currentTimeMillis(), JobContext.NONE).workers().get(0);
            assertThat(found.rcAbove()).as("compared up to the worker's floor").isEqualTo(1);
            assertThat(found.rcBelow()).isZero();
            assertThat(found.samples()).containsExactly("PBN " + leak + ": RC above the catalog's (leak)");
            ClusterCountsCheck.WorkerResult unseen = checker(links(real, (id, r) -> r, 0), 8).runOne(workerId, System.currentTimeMillis(),
                    JobContext.NONE).workers().get(0);
            assertThat(unseen.clean()).as("with no floor known, only up to the catalog's highest PBN: the leak is not seen").isTrue();
        } finally {
            gma.appendSingle(GmaChunk.UpdateKinds.RC_ADD, leak, -1);
        }
        assertThat(check().clean()).as("put back by hand: clean again").isTrue();
    }

    @Test
    void fsckJob_unknownWorker_refusedBeforeAJobIsQueued() {
        GcJobs jobs = master().getBean(GcJobs.class);
        assertThatThrownBy(() -> jobs.fsck("test", 9_999L)).isInstanceOf(UnknownWorkerException.class)
                .hasMessageContaining("no worker with id 9999");
    }

    private static ClusterCountsCheck checker(ClusterCountsCheck.Links links) {
        return checker(links, ClusterCountsCheck.MAX_WINDOW_PBNS);
    }

    private static ClusterCountsCheck checker(ClusterCountsCheck.Links links, long windowPbns) {
        return checker(links, windowPbns, Duration.ofSeconds(30));
    }

    private static ClusterCountsCheck checker(ClusterCountsCheck.Links links, long windowPbns, Duration holdReport) {
        return new ClusterCountsCheck(master().getBean(Catalog.class), master().getBean(GcService.class),
                () -> master().getBean(SnapshotCommit.class), links, windowPbns, Duration.ofSeconds(10), holdReport);
    }

    private static PbnRange range(int worker) {
        return cluster.workers().get(worker).getBean(WorkerConnector.class).status().assignment().range();
    }

    private static MasterCountsLinks realLinks() {
        return new MasterCountsLinks(master().getBean(ClusterServer.class), master().getBean(GcDeltaSenders.class));
    }

    /**
     * {@code real}, with {@code remote} (given the worker id and real's end) in place of its counts check ends, and {@code past}
     * as every worker's PBN floor (-1: real's).
     */
    private static ClusterCountsCheck.Links links(MasterCountsLinks real,
                                                  java.util.function.BiFunction<Long, ClusterCountsCheck.Remote, ClusterCountsCheck.Remote> remote,
                                                  long past) {
        return new ClusterCountsCheck.Links() {
            @Override
            public ClusterCountsCheck.Remote counts(long workerId) {
                ClusterCountsCheck.Remote r = real.counts(workerId);
                return r == null ? null : remote.apply(workerId, r);
            }

            @Override
            public boolean connected(long workerId) {
                return real.connected(workerId);
            }

            @Override
            public long pending(long workerId) {
                return real.pending(workerId);
            }

            @Override
            public long handedOutPast(long workerId) {
                return past < 0 ? real.handedOutPast(workerId) : past;
            }
        };
    }

    /** One past the highest PBN of {@code range} any map entry of the catalog names (the catalog's highest referenced). */
    private static long referencedPast(PbnRange range) {
        Catalog catalog = master().getBean(Catalog.class);
        long[] max = {range.first()};
        for (VolumeRecord v : catalog.volumes()) {
            catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
                if (range.contains(pbn)) {
                    max[0] = Math.max(max[0], pbn + 1);
                }
                return true;
            });
        }
        return max[0];
    }

    /** True if some thread waits to enter {@code monitor}. */
    private static boolean someoneWaitsFor(Object monitor) {
        int id = System.identityHashCode(monitor);
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
            if (t != null && t.getThreadState() == Thread.State.BLOCKED && t.getLockInfo() != null
                    && t.getLockInfo().getIdentityHashCode() == id) {
                return true;
            }
        }
        return false;
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
