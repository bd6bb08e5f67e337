package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Attacks on distributed GC with the blocks on the workers (master + 2 workers as Spring contexts in
 * this JVM, real sockets, real RocksDB, GMA and BOSC files, agent backups): each scenario is a way
 * bad luck could free a block a committed snapshot still references, and each asserts that every
 * retained snapshot still restores byte for byte. The cluster is the one the GC test classes of this
 * JVM share ({@link SharedGcCluster}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(SharedGcCluster.class)
class DataOnWorkersGcRaceTest {
    private static final int BS = DataOnWorkersCluster.BS;

    private static DataOnWorkersCluster cluster;

    @BeforeAll
    static void cluster(DataOnWorkersCluster shared) {
        cluster = shared;
    }

    /**
     * The race of a sweep with a commit whose counts are still on their way: the worker's guard ties
     * a backup's protection to its session, and the commit's RC+1 reaches the worker later, through
     * the outbox (GC_DELTA, its own lane). The master's round checks the outbox is drained and then
     * asks; a commit between the check and the worker's sweep (emulated here by asking the worker
     * directly while its delta lane is held) must not leave the committed blocks with neither a
     * count nor a session: once the session ended, only its expiry (protection time + grace) holds
     * them, and a backup that ran longer than the grace is past it. The master ends a committed
     * session on a worker only once the worker acknowledged the deltas routed to it by then.
     */
    @Test
    @Order(1)
    void sweep_afterCommitBeforeItsDeltasArrive_freesNoBlockOfTheCommittedSnapshot() throws Exception {
        cluster.gcCycle(); // the shared cluster: no unreferenced block left by another class for the sweeps below to free
        List<ConfigurableApplicationContext> workers = cluster.workers();
        List<WorkerGcMetadata> gcs = new ArrayList<>();
        List<GraceGuard> guards = new ArrayList<>();
        for (ConfigurableApplicationContext w : workers) {
            WorkerGcMetadata gc = w.getBean(WorkerGcMetadata.class);
            gcs.add(gc);
            guards.add(gc.guard()); // taken now: the lock is held below
        }
        byte[] image = DataOnWorkersCluster.random(21, 48);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch committed = new CountDownLatch(1);
        AtomicLong freed = new AtomicLong();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        // holds both workers' GC metadata lock: each delta waits for it (WorkerGcMetadata.log), the
        // guard and this thread's sweep (reentrant) do not
        Thread holder = new Thread(() -> {
            synchronized (gcs.get(0)) {
                synchronized (gcs.get(1)) {
                    held.countDown();
                    try {
                        committed.await(60, TimeUnit.SECONDS);
                        Thread.sleep(300); // the GC_SESSION_ENDs, if sent, are served; the grace (1 ms) is past
                        for (ConfigurableApplicationContext w : workers) {
                            WorkerConnector c = w.getBean(WorkerConnector.class);
                            WorkerRangeSweep sweep = c.rangeSweep();
                            assertThat(sweep.tryBegin()).isTrue();
                            freed.addAndGet(sweep.run(c.status().assignment().range(), 0, false).sweep().freed());
                        }
                    } catch (Throwable e) {
                        failed.set(e);
                    }
                }
            }
        }, "delta-lane-holder");
        holder.start();
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        long seq;
        try (AgentDriver agent = cluster.agent()) {
            seq = agent.backup("race", image, BS, true).sequence();
        } finally {
            committed.countDown();
        }
        holder.join(60_000);
        assertThat(failed.get()).isNull();

        assertThat(freed.get()).as("no block of the committed snapshot freed").isZero();
        cluster.awaitDeltasDelivered();
        for (GraceGuard g : guards) {
            await("the session ends once its counts are there").atMost(Duration.ofSeconds(20))
                    .until(() -> g.openSessions() == 0);
        }
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("race", seq).image()).isEqualTo(image);
        }
    }

    /**
     * The workers down while a snapshot is deleted (a backup cannot commit while they are: its
     * blocks live there): the cycle does not sweep them (lost), and once they are back the next
     * cycle sweeps each only with its outbox drained. The retained snapshot, which shares half its
     * blocks with the deleted one, restores byte for byte. (The incremental's commit carries the
     * RC-1 of the blocks it replaced, so the deletion itself may route nothing to the workers.)
     */
    @Test
    @Order(2)
    void gcCycle_workersDownWhileASnapshotIsDeleted_backlogArrivesBeforeTheirSweep_retainedSnapshotRestores() throws Exception {
        cluster.gcCycle(); // the shared cluster: no snapshot of another class's past the retention, so the cycle below deletes down@1 alone
        byte[] first = DataOnWorkersCluster.random(41, 64);
        byte[] second = DataOnWorkersCluster.random(42, 64);
        System.arraycopy(first, 0, second, 0, 32 * BS); // shares first's first half
        long seq;
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("down", first, BS, true);
            seq = agent.backup("down", second, BS, true).sequence();
        }
        ConfigurableApplicationContext master = cluster.master();
        GcDeltaSenders senders = master.getBean(GcDeltaSenders.class);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < cluster.workers().size(); i++) {
            ids.add(cluster.workerId(i));
        }
        cluster.awaitDeltasDelivered();
        cluster.stopWorkers();
        ClusterServer clusterServer = master.getBean(ClusterServer.class);
        await().atMost(Duration.ofSeconds(20)).until(() -> ids.stream().allMatch(id -> clusterServer.gcGuards().up(id) == null));
        Thread.sleep(50); // the grace (1 ms) of the backups' protection passes

        GcService gc = master.getBean(GcService.class);
        assertThat(gc.runCycle().snapshotsDeleted()).as("keep-last=1 deletes down@1 while the workers are down").isEqualTo(1);

        cluster.startWorkers();
        gc.runCycle();

        for (long id : ids) {
            assertThat(senders.pending(id)).isZero();
        }
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("down", seq).image()).isEqualTo(second);
        }
    }
}
