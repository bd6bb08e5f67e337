package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.server.engine.ClusterBroadcast;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.LocalDedupWorker;
import org.junit.jupiter.api.Test;

/**
 * The remote master/worker index's contract (everything {@link RemoteClusterFingerprintIndexTest}
 * asks) with the two-phase broadcast: DEDUP_PROBE and DEDUP_CANDIDATES on real TLS links, and only
 * the worker holding a segment looks it up in full.
 */
class RemoteTwoPhaseClusterFingerprintIndexTest extends RemoteClusterFingerprintIndexTest {

    @Override
    protected ClusterBroadcast broadcast() {
        return ClusterBroadcast.TWO_PHASE;
    }

    @Override
    @Test
    void lookup_afterRecord_findsDuplicatesThroughTheRemoteWorkers() {
        int n = 1000;
        byte[] f = fps(7, n);
        storeNew(f, n);
        assertThat(engines().stream().mapToLong(e -> e.engine().stats().lookups()).sum())
                .as("new data: probes only, no worker had a candidate").isZero();
        long[] again = new long[n];
        try (DedupStream s = index().openStream("v")) {
            s.lookup(f, n, again);
        }
        for (int i = 0; i < n; i++) {
            assertThat(again[i]).as("entry %d", i).isEqualTo(1000 + i);
        }
        long holding = engines().stream().filter(e -> e.load().storedEntries() > 0).count();
        assertThat(holding).as("one worker stored the segment").isEqualTo(1);
        for (LocalDedupWorker e : engines()) {
            assertThat(e.engine().stats().lookups()).as("only the holder looks the segment up")
                    .isEqualTo(e.load().storedEntries() > 0 ? n : 0);
        }
    }
}
