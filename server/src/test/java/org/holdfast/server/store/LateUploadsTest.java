package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which of a worker's objects are an old node's late uploads, on listings alone: never an adopted log,
 * a marker or a newest-epoch key, nor what may be the last copy of a log's blocks.
 */
class LateUploadsTest {
    private static String log(long epoch, int id, long logEpoch) {
        return LogKeys.key(WorkerKeys.space(3, epoch), id, logEpoch);
    }

    @Test
    void find_logsOfOlderEpochsTheNewestMarkerDoesNotList_only() {
        // epoch 3 adopted log 1 (epoch 1) and log 4 (epoch 2); logs 2 and 5 came late; log 1's older copy lost to a compaction
        String marker = new AdoptedMarker(3, 3, List.of(log(1, 1, 7), log(2, 4, 1))).toText();
        String m2 = new AdoptedMarker(3, 2, List.of(log(1, 1, 7))).toText();
        List<String> listing = List.of(log(1, 1, 1), log(1, 1, 7), log(1, 2, 1), WorkerKeys.marker(3, 2), log(2, 4, 1), log(2, 5, 1),
                WorkerKeys.marker(3, 3), log(3, 6, 1), "workers/w3/e1/notes", "workers/w30/e1/logs/00000009-0000000000000001.hfl");

        List<String> late = LateUploads.find(3, 3, listing, k -> (k.equals(WorkerKeys.marker(3, 2)) ? m2 : marker).getBytes(
                StandardCharsets.UTF_8), k -> true).late();

        assertThat(late).containsExactlyInAnyOrder(log(1, 1, 1), log(1, 2, 1), log(2, 5, 1));
    }

    @Test
    void find_epochOneOrADamagedOrMissingNewestMarker_deletesNothing() {
        assertThat(LateUploads.find(3, 1, List.of(log(1, 1, 1), WorkerKeys.marker(3, 1)), k -> new byte[0], k -> true).late()).isEmpty();
        assertThat(LateUploads.find(3, 2, List.of(log(1, 1, 1), WorkerKeys.marker(3, 2)), k -> "holdfast-adopted-logs 1\n".getBytes(
                StandardCharsets.UTF_8), k -> true).late()).as("damaged").isEmpty();
        assertThat(LateUploads.find(3, 2, List.of(log(1, 1, 1), log(2, 2, 1)), k -> new byte[0], k -> true).late()).as("no marker at 2").isEmpty();
    }

    @Test
    void find_lateCopyOfALogWhoseAdoptedCopyIsGone_keptAsPossiblyTheLastCopy() {
        // epoch 2 adopted log 1 at epoch 1 (log epoch 1); the old node, still running, compacted it after the takeover's
        // listing: its copy (log epoch 5) went up under epoch 1 and the adopted copy was deleted. Deleting the copy too
        // would leave no copy of log 1's blocks in the bucket.
        String marker = new AdoptedMarker(3, 2, List.of(log(1, 1, 1), log(1, 2, 1))).toText();
        List<String> listing = List.of(log(1, 1, 5), log(1, 2, 1), log(1, 2, 6), log(1, 3, 1), WorkerKeys.marker(3, 2));

        LateUploads.Found f = LateUploads.find(3, 2, listing, k -> marker.getBytes(StandardCharsets.UTF_8), k -> true);

        assertThat(f.kept()).as("log 1's only copy").containsExactly(log(1, 1, 5));
        assertThat(f.late()).as("log 2's adopted copy is there; log 3 was never adopted").containsExactlyInAnyOrder(log(1, 2, 6), log(1, 3, 1));
    }

    @Test
    void find_adoptedCopyListedButGoneOnAHead_lateCopyKept() {
        // a listing that lags a delete still shows the adopted copy: the HEAD decides
        String marker = new AdoptedMarker(3, 2, List.of(log(1, 1, 1))).toText();
        List<String> listing = List.of(log(1, 1, 1), log(1, 1, 5), WorkerKeys.marker(3, 2));

        LateUploads.Found f = LateUploads.find(3, 2, listing, k -> marker.getBytes(StandardCharsets.UTF_8), k -> !k.equals(log(1, 1, 1)));

        assertThat(f.late()).isEmpty();
        assertThat(f.kept()).containsExactly(log(1, 1, 5));
    }

    @Test
    void find_byANodeWhoseEpochIsNotTheNewest_deletesNothing() {
        // the owner at 2 lists after a takeover at 3 claimed: epoch 3's owner decides what its marker left out, not this node
        String m3 = new AdoptedMarker(3, 3, List.of()).toText();
        String m2 = new AdoptedMarker(3, 2, List.of()).toText();
        java.util.function.Function<String, byte[]> read = k -> (k.equals(WorkerKeys.marker(3, 2)) ? m2 : m3).getBytes(StandardCharsets.UTF_8);
        List<String> listing = List.of(log(1, 1, 1), WorkerKeys.marker(3, 2), log(2, 4, 1), WorkerKeys.marker(3, 3));

        assertThat(LateUploads.find(3, 2, listing, read, k -> true).late()).isEmpty();
        assertThat(LateUploads.find(3, 3, listing, read, k -> true).late())
                .containsExactlyInAnyOrder(log(1, 1, 1), log(2, 4, 1));
    }

    @Test
    void find_logAnEarlierMarkerAdoptedThatTheNewestMissed_kept_anOldNodesUploadNot() {
        // epoch 2 adopted logs 1 and 2 of epoch 1; epoch 3's listing missed log 2 (a lagging listing), so its marker names
        // log 1 only; log 7 came late under epoch 2. Log 2 is no old node's upload: it may be the only copy of its blocks
        String m2 = new AdoptedMarker(3, 2, List.of(log(1, 1, 1), log(1, 2, 1))).toText();
        String m3 = new AdoptedMarker(3, 3, List.of(log(1, 1, 1))).toText();
        List<String> listing = List.of(log(1, 1, 1), log(1, 2, 1), WorkerKeys.marker(3, 2), log(2, 7, 1), WorkerKeys.marker(3, 3));
        java.util.function.Function<String, byte[]> read = k -> (k.equals(WorkerKeys.marker(3, 2)) ? m2 : m3).getBytes(StandardCharsets.UTF_8);

        LateUploads.Found f = LateUploads.find(3, 3, listing, read, k -> true);

        assertThat(f.kept()).containsExactly(log(1, 2, 1));
        assertThat(f.late()).containsExactly(log(2, 7, 1));
        assertThat(LateUploads.find(3, 3, listing, k -> k.equals(WorkerKeys.marker(3, 2)) ? new byte[0] : read.apply(k), k -> true).late())
                .as("an earlier marker unreadable: nothing it might name given up").isEmpty();
    }
}
