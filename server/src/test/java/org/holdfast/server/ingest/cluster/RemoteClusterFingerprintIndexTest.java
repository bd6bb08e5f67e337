package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.engine.ClusterBroadcast;
import org.holdfast.server.engine.ClusterFingerprintIndex;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.FingerprintIndexContractTest;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.junit.jupiter.api.Test;

/**
 * The master/worker index's contract with its two workers in other "nodes": each worker hosts its
 * own engine behind a {@link WorkerConnector} registered over TLS with a real {@link ClusterServer},
 * and the master calls them through {@link RemoteDedupWorker}s on those links (one JVM, real sockets).
 * With a full broadcast; {@link RemoteTwoPhaseClusterFingerprintIndexTest} runs the same with the
 * two-phase one.
 */
class RemoteClusterFingerprintIndexTest extends FingerprintIndexContractTest {
    private static final int WORKERS = 2;
    private TlsWorkerNodes nodes;

    @Override
    protected FingerprintIndex openIndex(Path dir) {
        SungemSettings settings = SungemFingerprintIndexTest.smallSettings();
        nodes = new TlsWorkerNodes(dir, WORKERS, settings, Clock.systemUTC());
        return new ClusterFingerprintIndex(nodes.workers(), ClusterMode.NEAREST, broadcast(), settings.uSegment(),
                settings.uContainer() / 2);
    }

    /** How the index under test broadcasts lookups. */
    protected ClusterBroadcast broadcast() {
        return ClusterBroadcast.FULL;
    }

    /** The workers' engines (in worker order of connecting, not of the master's list). */
    protected List<LocalDedupWorker> engines() {
        return nodes.engines();
    }

    @Override
    protected void closeIndex(FingerprintIndex index) {
        index.close();
        nodes.close();
    }

    /** Looks up {@code n} new fingerprints on a stream of volume {@code v} and records them as stored at PBNs 1000 on. */
    void storeNew(byte[] f, int n) {
        long[] pbns = new long[n];
        boolean[] isNew = new boolean[n];
        try (DedupStream s = index().openStream("v")) {
            s.lookup(f, n, pbns);
            for (int i = 0; i < n; i++) {
                pbns[i] = 1000 + i;
                isNew[i] = true;
            }
            s.record(f, n, pbns, isNew);
        }
    }

    @Test
    void lookup_afterRecord_findsDuplicatesThroughTheRemoteWorkers() {
        int n = 1000;
        byte[] f = fps(7, n);
        storeNew(f, n);
        long[] again = new long[n];
        try (DedupStream s = index().openStream("v")) {
            s.lookup(f, n, again);
        }
        for (int i = 0; i < n; i++) {
            assertThat(again[i]).as("entry %d", i).isEqualTo(1000 + i);
        }
        long lookups = engines().stream().mapToLong(e -> e.engine().stats().lookups()).sum();
        assertThat(lookups).as("the workers' engines did the lookups").isGreaterThanOrEqualTo(2L * n);
    }

    /**
     * After a backup through both workers the master knows, per worker id, what each one's index
     * holds as its last answer said: the holder's figure is not zero, and the figures are the
     * workers' own.
     */
    @Test
    void indexReport_afterABackupThroughTwoWorkers_isEachWorkersOwnFigure() {
        long before = System.currentTimeMillis();
        int n = 1000;
        storeNew(fps(17, n), n);
        List<Long> reported = new java.util.ArrayList<>();
        for (org.holdfast.server.cluster.WorkerView w : nodes.registry().workers()) {
            IndexReport r = nodes.server().dedupLinks().indexReport(w.workerId());
            assertThat(r).as("worker %d answered dedup calls", w.workerId()).isNotNull();
            assertThat(r.atMillis()).isBetween(before, System.currentTimeMillis());
            reported.add(r.entries());
        }
        List<Long> own = engines().stream().map(e -> e.load().storedEntries()).toList();
        assertThat(reported).containsExactlyInAnyOrderElementsOf(own);
        assertThat(reported.stream().mapToLong(Long::longValue).sum()).as("every new fingerprint is held by one worker").isEqualTo(n);
        assertThat(nodes.server().dedupLinks().indexReport(99)).as("no such worker").isNull();
    }

    @Test
    void lookup_workerLinkLost_failsWithClearErrorAndInventsNothing() throws Exception {
        byte[] f = fps(9, 100);
        long[] pbns = new long[100];
        FingerprintIndex idx = index();
        nodes.connector(WORKERS - 1).close(); // one worker's connector: its link ends
        await().atMost(Duration.ofSeconds(10)).until(() -> nodes.server().dedupLinks().workers().size() == WORKERS - 1);
        try (DedupStream s = idx.openStream("v")) {
            assertThatThrownBy(() -> s.lookup(f, 100, pbns)).isInstanceOf(CompletionException.class)
                    .hasRootCauseInstanceOf(DedupWorkerLostException.class)
                    .rootCause().hasMessageContaining("is lost").hasMessageContaining("run it again: the workers still connected serve it");
        }
        assertThat(pbns).containsOnly(0L);
    }

    @Test
    void lookup_workerEngineFails_failsNamingTheWorkerWithoutItsInternalsAndInventsNothing() throws Exception {
        byte[] f = fps(11, 100);
        long[] pbns = new long[100];
        FingerprintIndex idx = index();
        engines().get(0).close(); // the worker's engine fails every call from now on: DEDUP_FAILED, the link stays
        try (DedupStream s = idx.openStream("v")) {
            assertThatThrownBy(() -> s.lookup(f, 100, pbns)).isInstanceOf(CompletionException.class)
                    .hasRootCauseInstanceOf(DedupWorkerFailedException.class)
                    .rootCause().hasMessageContaining("failed a request").hasMessageContaining("run it again")
                    .hasMessageNotContaining("closed").hasMessageNotContaining("Exception");
        }
        assertThat(pbns).containsOnly(0L);
        assertThat(nodes.server().dedupLinks().workers()).as("a failed call does not end the link").hasSize(WORKERS);
    }

    @Test
    void remoteIndex_workerAway_backupsUseTheOthersAndForgetIsRefused() throws Exception {
        index();
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(nodes.server().dedupLinks(), nodes.registry(), ClusterMode.NEAREST,
                SungemFingerprintIndexTest.smallSettings());
        byte[] f = fps(11, 10);
        nodes.connector(1).close(); // worker w1's connector
        await().atMost(Duration.ofSeconds(10)).until(() -> nodes.server().dedupLinks().workers().size() == WORKERS - 1);
        try (DedupStream s = remote.openStream("v")) {
            long[] pbns = new long[10];
            s.lookup(f, 10, pbns);
            assertThat(pbns).containsOnly(0L);
        }
        assertThatThrownBy(() -> remote.forgetAll(new long[] {5}, f, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot free blocks while dedup worker w1").hasMessageContaining("bring the worker back");
    }

    /**
     * A sweep hands over up to 64 GMA chunks of freed PBNs at once (half a million): more than one
     * DEDUP_FORGET may carry, so the master sends them in frames of at most the limit, and every
     * worker forgets those of the first frame and of the last.
     */
    @Test
    void remoteIndex_forgetAllOfMorePbnsThanOneFrameHolds_everyWorkerForgetsAllOfThem() {
        int n = 10;
        byte[] f = fps(13, n);
        storeNew(f, n); // PBNs 1000.. on the workers
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(nodes.server().dedupLinks(), nodes.registry(), ClusterMode.NEAREST,
                SungemFingerprintIndexTest.smallSettings());
        int total = ProtocolLimits.MAX_DEDUP_ENTRIES + 1000;
        long[] pbns = new long[total];
        byte[] all = fps(14, total);
        for (int i = 0; i < total; i++) {
            pbns[i] = 1_000_000 + i;
        }
        for (int i = 0; i < n; i++) { // the stored ones: half at the start (first frame), half at the end (second frame)
            int at = i < n / 2 ? i : total - n + i;
            pbns[at] = 1000 + i;
            System.arraycopy(f, i * 32, all, at * 32, 32);
        }
        long[] before = new long[n];
        try (DedupStream s = remote.openStream("v")) {
            s.lookup(f, n, before);
        }
        assertThat(before).as("stored: answered before the forget").doesNotContain(0L);

        remote.forgetAll(pbns, all, total);

        long[] again = new long[n];
        try (DedupStream s = remote.openStream("v")) {
            s.lookup(f, n, again);
        }
        assertThat(again).as("forgotten by every worker: never answered again").containsOnly(0L);
    }

    @Test
    void remoteIndex_noWorkerConnected_openStreamSaysWhatToDo() {
        index();
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(new DedupLinks(), nodes.registry(), ClusterMode.NEAREST,
                SungemFingerprintIndexTest.smallSettings());
        // DedupUnavailableException: the agent is told this message as it is (not "internal server error")
        assertThatThrownBy(() -> remote.openStream("v")).isInstanceOf(org.holdfast.server.engine.DedupUnavailableException.class)
                .hasMessageContaining("no dedup worker is connected to this master").hasMessageContaining("holdfast.cluster.role=worker");
    }
}
