package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.container.Container;
import org.holdfast.server.container.ContainerStore;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndex;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.cluster.DataOnWorkersCluster;
import org.holdfast.server.ingest.cluster.SharedGcCluster;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The invariant that makes forwarded stale marks nearly free ("Stale marks through the master"): in
 * nearest mode with the blocks on the workers, every worker's engine records only PBNs of its own
 * worker's range, also for content several volumes share (a segment matched on one worker is stored
 * and recorded there). Real ingest, the master and two workers of {@link SharedGcCluster}.
 */
@ExtendWith(SharedGcCluster.class)
class DataOnWorkersEngineRangesTest {
    private static final int BS = DataOnWorkersCluster.BS;
    private static final int PART = 32;

    private static DataOnWorkersCluster cluster;

    @BeforeAll
    static void cluster(DataOnWorkersCluster shared) {
        cluster = shared;
        cluster.gcCycle(); // the shared cluster: start from no snapshot past the retention
    }

    /** A volume image of parts: {@code seeds[i]}'s random blocks as part i. */
    private static byte[] image(long... seeds) {
        byte[] b = new byte[seeds.length * PART * BS];
        for (int i = 0; i < seeds.length; i++) {
            System.arraycopy(DataOnWorkersCluster.random(seeds[i], PART), 0, b, i * PART * BS, PART * BS);
        }
        return b;
    }

    @Test
    void nearestDataOnWorkers_sharedContentAcrossVolumes_eachEngineHoldsOnlyItsOwnRangesPbns() throws Exception {
        try (AgentDriver agent = cluster.agent()) {
            // new content goes to the least loaded worker (the stream's home), so each of these lands on another one or one
            // that held nothing: both engines hold blocks afterwards
            agent.backup("er1", image(101, 102, 103), BS, true);
            agent.backup("er2", image(104, 105, 106), BS, true);
            // one segment matched on both workers: each part is recorded where it matched, the new one beside it
            agent.backup("er3", image(102, 107, 105), BS, true);
            agent.backup("er1", image(106, 101, 108), BS, true); // er1 again: er2's end, its own start, new
        }
        List<ConfigurableApplicationContext> workers = cluster.workers();
        long total = 0;
        for (int i = 0; i < workers.size(); i++) {
            PbnRange own = workers.get(i).getBean(WorkerConnector.class).status().assignment().range();
            LazyDedupWorker dedup = workers.get(i).getBean(LazyDedupWorker.class);
            SungemFingerprintIndex engine = dedup.sungemIfOpen();
            assertThat(engine).as("worker " + i + "'s engine was used").isNotNull();
            dedup.flush(); // every recorded container on disk
            List<Long> foreign = new ArrayList<>();
            long[] held = new long[1];
            ContainerStore store = engine.containerStore();
            store.forEachStoredId(id -> {
                Container c = store.readUncached(id);
                for (int off = 0; c != null && off < c.count(); off++) {
                    long p = c.pbn(off);
                    if (p != 0) {
                        held[0]++;
                        if (!own.contains(p)) {
                            foreign.add(p);
                        }
                    }
                }
            });
            assertThat(foreign).as("worker " + i + " (range " + own + ") holds PBNs of another range").isEmpty();
            assertThat(held[0]).as("worker " + i + "'s engine holds blocks").isPositive();
            total += held[0];
        }
        assertThat(total).as("the engines hold the stored blocks").isGreaterThanOrEqualTo(8L * PART);
    }
}
