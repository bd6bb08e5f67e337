package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two master indexes over the same workers (the remote master builds a new one when the set of
 * workers up changes, while backups on the old one go on over the same links): their streams must
 * not share a worker stream, or one ending drops the other's state on the worker mid-backup.
 */
class ClusterStreamIdsTest {
    @TempDir
    Path dir;

    private static void recordNew(DedupStream s, long seed, long firstPbn) {
        int n = 16;
        byte[] f = new byte[n * 32];
        new Random(seed).nextBytes(f);
        long[] pbns = SungemFingerprintIndexTest.seq(firstPbn, n);
        boolean[] isNew = new boolean[n];
        Arrays.fill(isNew, true);
        s.record(f, n, pbns, isNew);
    }

    @Test
    void openStream_twoIndexesOverOneWorker_endingOneKeepsTheOthersWorkerState() {
        try (LocalDedupWorker w = new LocalDedupWorker(0, dir.resolve("w0"), SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC())) {
            ClusterFingerprintIndex before = new ClusterFingerprintIndex(List.of(w), ClusterMode.NEAREST,
                    ClusterBroadcast.TWO_PHASE, 256, 512);
            ClusterFingerprintIndex after = new ClusterFingerprintIndex(List.of(w), ClusterMode.NEAREST,
                    ClusterBroadcast.TWO_PHASE, 256, 512);
            try (DedupStream a = before.openStream("a")) {
                recordNew(a, 1, 1);
                after.openStream("b").close();
                recordNew(a, 2, 100);
            }
            assertThat(w.load().containers()).as("stream a's new data stays in its one default container").isEqualTo(1);
        }
    }
}
