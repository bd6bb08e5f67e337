package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A worker whose GC metadata ({@code range-data/gc}) is lost while its range data stays (a disk
 * replaced, a directory removed by hand), in master + 2 workers as Spring contexts in this JVM:
 * the worker opens a fresh, empty GMA over its range and the master sends only the deltas it has
 * not had acknowledged, so every count from before the loss is gone. The cluster is the one the GC
 * test classes of this JVM share if it runs, taken for this class alone ({@link SharedGcCluster.Spoils}).
 */
@ExtendWith(SharedGcCluster.class)
class DataOnWorkersGmaLossTest {
    private static final int BS = DataOnWorkersCluster.BS;

    private static DataOnWorkersCluster cluster;

    @BeforeAll
    static void cluster(@SharedGcCluster.Spoils DataOnWorkersCluster own) {
        cluster = own;
    }

    /**
     * "old" is backed up and counted on the workers; their GMAs are then lost. A second volume backs
     * up the same content (dedup: a fresh GMA would count those blocks once, for it alone) and then
     * something else, so the GC cycle deletes its first snapshot: RC 1 - 1 = 0, expired. Without the
     * check the worker freed blocks "old" still references (32 of them, seen before the fix). Now
     * each worker finds its GC metadata created over a range store that already held blocks, marks
     * it ({@link WorkerGcMetadata#COUNTS_LOST}) and refuses every sweep, so nothing is freed.
     */
    @Test
    void sweep_afterTheWorkersGmaWasLost_freesNoBlockAnOlderSnapshotReferences() throws Exception {
        cluster.gcCycle(); // a cluster another class used: no snapshot of its past the retention, so the cycle below deletes other@1 alone
        List<ConfigurableApplicationContext> workers = cluster.workers();
        byte[] old = DataOnWorkersCluster.random(31, 32);
        long oldSeq;
        try (AgentDriver agent = cluster.agent()) {
            oldSeq = agent.backup("old", old, BS, true).sequence();
        }
        cluster.awaitDeltasDelivered();
        boolean[] held = new boolean[workers.size()]; // which workers hold old's blocks when their GC metadata is lost
        for (int i = 0; i < workers.size(); i++) {
            org.holdfast.server.store.DataStore store = workers.get(i).getBean(WorkerRangeData.class).store();
            held[i] = store != null && store.nextPbn() > workers.get(i).getBean(WorkerConnector.class).status().assignment().range().first();
        }
        assertThat(held).as("old's blocks are on some worker").contains(true);
        cluster.stopWorkers();
        for (int i = 0; i < held.length; i++) {
            org.springframework.util.FileSystemUtils.deleteRecursively(cluster.nodeDir(i).resolve("range-data").resolve("gc"));
        }
        cluster.startWorkers();
        workers = cluster.workers();
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("other", old, BS, true); // matches old's blocks on the workers
            agent.backup("other", DataOnWorkersCluster.random(32, 32), BS, true);
        }
        Thread.sleep(50); // the grace (1 ms) passes

        GcService.CycleReport cycle = cluster.gcCycle();

        assertThat(cycle.snapshotsDeleted()).as("keep-last=1 deletes other@1").isEqualTo(1);
        for (int i = 0; i < workers.size(); i++) {
            WorkerRangeSweep.Progress p = workers.get(i).getBean(WorkerConnector.class).rangeSweep().progress();
            String node = cluster.nodes().get(i);
            Path mark = cluster.nodeDir(i).resolve("range-data").resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST);
            if (held[i]) {
                assertThat(p.last()).as("no sweep ran on " + node).isNull();
                assertThat(p.lastFailure()).contains("reference counts from before are lost")
                        .as("names the repair without a copy").contains("worker-gc-import");
                assertThat(mark).exists();
            } else {
                assertThat(mark).as(node + " held no block when its GC metadata was lost: nothing of its counts is missing")
                        .doesNotExist();
            }
        }
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("old", oldSeq).image()).isEqualTo(old);
        }
    }
}
