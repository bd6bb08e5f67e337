package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.cluster.DataOnWorkersCluster;
import org.holdfast.server.ingest.cluster.GcDeltaSenders;
import org.holdfast.server.ingest.cluster.RangeReferenceGuard;
import org.holdfast.server.ingest.cluster.RangeSweepReport;
import org.holdfast.server.ingest.cluster.SharedGcCluster;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerRangeSweep;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Distributed GC with the blocks on the workers, end to end in this JVM: a master with
 * {@code holdfast.cluster.data=workers} and GC bookkeeping on, and two workers, as Spring contexts
 * over their real ports; an agent backs up over the ingest port. The master's GC cycle deletes a
 * snapshot its retention no longer keeps, routes the dereferences to the owners (outbox, GC_DELTA),
 * and asks each worker to sweep: exactly the blocks no snapshot references any more are freed on
 * the workers, every retained snapshot restores byte for byte, and a later backup of the freed
 * content stores it again and restores. The master's own data store holds nothing. The cluster is
 * the one the GC test classes of this JVM share ({@link SharedGcCluster}).
 */
@ExtendWith(SharedGcCluster.class)
class DataOnWorkersGcTest {
    private static final int BS = DataOnWorkersCluster.BS;
    private static final int HALF = 32;

    private static DataOnWorkersCluster cluster;

    @BeforeAll
    static void cluster(DataOnWorkersCluster shared) {
        cluster = shared;
    }

    @Test
    void gcCycle_dataOnWorkers_freesExactlyTheUnreferencedBlocksOnTheirOwners_everyRetainedSnapshotRestores() throws Exception {
        ConfigurableApplicationContext master = cluster.master();
        List<ConfigurableApplicationContext> workers = cluster.workers();
        assertThat(master.getBean(IngestServices.class).referenceGuard()).as("each PBN protected by its owner")
                .isInstanceOf(RangeReferenceGuard.class);
        cluster.gcCycle(); // the shared cluster: no snapshot past the retention, no unreferenced block left by another class
        List<RangeSweepReport> before = workers.stream().map(w -> w.getBean(WorkerConnector.class).rangeSweep().progress().last())
                .toList();
        long[] forgottenBefore = forgottenOnceForwarded(workers);
        long[] skippedBefore = skipped(workers);

        byte[] a = DataOnWorkersCluster.random(1, 2 * HALF); // v1's first snapshot: its second half will be referenced by nothing
        byte[] b = DataOnWorkersCluster.random(2, 2 * HALF); // v1's second snapshot replaces every block
        byte[] c = DataOnWorkersCluster.random(3, 2 * HALF); // v2 shares a's first half
        System.arraycopy(a, 0, c, 0, HALF * BS);
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("v1", a, BS, true);
            agent.backup("v1", b, BS, true);
            agent.backup("v2", c, BS, true);
        }
        assertThat(master.getBean(DataStore.class).stats().appendedBlocks()).as("no block in the master's own store").isZero();
        GcDeltaSenders senders = master.getBean(GcDeltaSenders.class);
        Thread.sleep(50); // the grace (1 ms) of the backups' protection passes

        GcService.CycleReport cycle = cluster.gcCycle();

        assertThat(cycle.snapshotsDeleted()).as("keep-last=1 keeps v1@2 and v2@1").isEqualTo(1);
        for (int i = 0; i < workers.size(); i++) {
            assertThat(workers.get(i).getBean(WorkerConnector.class).rangeSweep().progress().last()).as("the cycle swept " + i)
                    .isNotNull().isNotSameAs(before.get(i));
        }
        assertThat(freedOn(workers)).as("exactly a's second half: referenced by nothing once v1@1 is gone").isEqualTo(HALF);
        long[] forgottenAfter = forgottenOnceForwarded(workers);
        for (int i = 0; i < workers.size(); i++) {
            // stale marks through the master (cluster version 8, nearest mode): its own sweep's and the other worker's
            assertThat(forgottenAfter[i] - forgottenBefore[i]).as("engine " + i + " forgot every freed block").isEqualTo(HALF);
        }
        long[] skippedAfter = skipped(workers);
        for (int i = 0; i < workers.size(); i++) {
            // the other worker's freed blocks were never recorded here: the gate skips them, no mark, no stale.log record
            long freedElsewhere = HALF - freedOn(List.of(workers.get(i)));
            assertThat(skippedAfter[i] - skippedBefore[i]).as("engine " + i + " skipped the other worker's freed blocks")
                    .isEqualTo(freedElsewhere);
        }
        for (int i = 0; i < workers.size(); i++) {
            assertThat(senders.pending(cluster.workerId(i))).as("every delta acknowledged before the sweep").isZero();
        }
        byte[] again = a.clone(); // a backup of the freed content stores it again: its fingerprints were forgotten
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("v1", 2).image()).isEqualTo(b);
            assertThat(agent.restore("v2", 1).image()).as("a's first half, shared, kept").isEqualTo(c);
            long seq = agent.backup("v3", again, BS, true).sequence();
            assertThat(agent.restore("v3", seq).image()).isEqualTo(a);
        }
        // reclaim-now judges the master's GMA alone: refused, saying why (fsck checks the workers: ClusterCountsCheckTest)
        for (String path : List.of("/api/v1/gc/reclaim")) {
            HttpResponse<String> r = post(master, path);
            assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(409);
            assertThat(r.body()).contains("urn:holdfast:problem:data-on-workers");
        }
    }

    /** Each worker engine's forgotten count once every worker's stale marks were taken by the master. */
    private static long[] forgottenOnceForwarded(List<ConfigurableApplicationContext> workers) {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> workers.stream()
                .allMatch(w -> w.getBean(WorkerConnector.class).rangeSweep().staleMarks().pending().isEmpty()));
        return workers.stream().mapToLong(w -> w.getBean(org.holdfast.server.engine.LazyDedupWorker.class).forgotten()).toArray();
    }

    private static long[] skipped(List<ConfigurableApplicationContext> workers) {
        return workers.stream().mapToLong(w -> w.getBean(org.holdfast.server.engine.LazyDedupWorker.class).forgetsSkipped()).toArray();
    }

    private static long freedOn(List<ConfigurableApplicationContext> workers) {
        long freed = 0;
        for (ConfigurableApplicationContext w : workers) {
            WorkerRangeSweep.Progress p = w.getBean(WorkerConnector.class).rangeSweep().progress();
            freed += p.last() == null ? 0 : p.last().sweep().freed();
        }
        return freed;
    }

    private static HttpResponse<String> post(ConfigurableApplicationContext ctx, String path) throws Exception {
        String port = ctx.getEnvironment().getProperty("local.server.port");
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + TestTokens.issue(ctx, Role.ADMIN)).header("Accept", "*/*")
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        return HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
    }
}
