package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which of a worker's objects are an old node's late uploads, on listings alone: never an adopted log, a marker or a newest-epoch key. */
class LateUploadsTest {
    private static String log(long epoch, int id, long logEpoch) {
        return LogArchive.key(WorkerKeys.space(3, epoch), id, logEpoch);
    }

    @Test
    void find_logsOfOlderEpochsTheNewestMarkerDoesNotList_only() {
        // epoch 3 adopted log 1 (epoch 1) and log 4 (epoch 2); logs 2 and 5 came late; log 1's older copy lost to a compaction
        String marker = new AdoptedMarker(3, 3, List.of(log(1, 1, 7), log(2, 4, 1))).toText();
        List<String> listing = List.of(log(1, 1, 1), log(1, 1, 7), log(1, 2, 1), WorkerKeys.marker(3, 2), log(2, 4, 1), log(2, 5, 1),
                WorkerKeys.marker(3, 3), log(3, 6, 1), "workers/w3/e1/notes", "workers/w30/e1/logs/00000009-0000000000000001.hfl");

        List<String> late = LateUploads.find(3, listing, k -> marker.getBytes(StandardCharsets.UTF_8));

        assertThat(late).containsExactlyInAnyOrder(log(1, 1, 1), log(1, 2, 1), log(2, 5, 1));
    }

    @Test
    void find_epochOneOrADamagedOrMissingNewestMarker_deletesNothing() {
        assertThat(LateUploads.find(3, List.of(log(1, 1, 1), WorkerKeys.marker(3, 1)), k -> new byte[0])).isEmpty();
        assertThat(LateUploads.find(3, List.of(log(1, 1, 1), WorkerKeys.marker(3, 2)), k -> "holdfast-adopted-logs 1\n".getBytes(
                StandardCharsets.UTF_8))).as("damaged").isEmpty();
        assertThat(LateUploads.find(3, List.of(log(1, 1, 1), log(2, 2, 1)), k -> new byte[0])).as("no marker at 2").isEmpty();
    }
}
