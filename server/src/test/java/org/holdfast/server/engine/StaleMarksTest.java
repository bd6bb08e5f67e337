package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StaleMarksTest {
    @TempDir
    Path dir;

    @Test
    void mark_thenReopenWithTornTail_keepsEveryWholeRecord() throws Exception {
        Path log = dir.resolve("stale.log");
        try (StaleMarks m = new StaleMarks(log)) {
            m.mark(new long[] {11, 12, 13}, 3);
        }
        Files.write(log, new byte[] {1, 2, 3, 4, 5}, StandardOpenOption.APPEND); // a torn record
        try (StaleMarks m = new StaleMarks(log)) {
            assertThat(m.contains(11)).isTrue();
            assertThat(m.contains(13)).isTrue();
            assertThat(m.contains(14)).isFalse();
            assertThat(m.lastSeq()).isEqualTo(3);
            m.mark(new long[] {14}, 1);
        }
        try (StaleMarks m = new StaleMarks(log)) {
            assertThat(m.contains(14)).as("appended after the truncated tail").isTrue();
            assertThat(m.size()).isEqualTo(4);
        }
    }

    @Test
    void retireThrough_allMarks_keepsTheSequenceAcrossRestart() {
        Path log = dir.resolve("stale.log");
        try (StaleMarks m = new StaleMarks(log)) {
            m.mark(new long[] {5, 6}, 2);
            assertThat(m.retireThrough(2)).isEqualTo(2);
            assertThat(m.isEmpty()).isTrue();
        }
        try (StaleMarks m = new StaleMarks(log)) {
            // A container purged through seq 2 must still see the next mark as newer.
            assertThat(m.lastSeq()).isEqualTo(2);
            m.mark(new long[] {7}, 1);
            assertThat(m.lastSeq()).isEqualTo(3);
        }
    }

    @Test
    void forget_thenCrashWithoutFlushOrClose_freedPbnIsNeverReturnedAfterReopen() {
        SungemSettings s = SungemFingerprintIndexTest.smallSettings();
        byte[] f = new byte[300 * 32];
        new Random(31).nextBytes(f);
        long[] pbns = new long[300];
        boolean[] isNew = new boolean[300];
        for (int i = 0; i < 300; i++) {
            pbns[i] = 1000 + i;
            isNew[i] = true;
        }
        SungemFingerprintIndex first = new SungemFingerprintIndex(dir, s, Clock.systemUTC());
        try (DedupStream st = first.openStream("v")) {
            st.lookup(f, 300, new long[300]);
            st.record(f, 300, pbns, isNew);
        }
        first.flush();
        first.forgetAll(new long[] {1000 + 17, 1000 + 200}, concat(f, 17, 200), 2);
        // No flush, no close: the process "dies" here; only what forget forced survives.
        SungemFingerprintIndex second = new SungemFingerprintIndex(dir, s.withContainerCacheBytes(1 << 16),
                Clock.systemUTC());
        try {
            long[] found = new long[300];
            try (DedupStream st = second.openStream("w")) {
                st.lookup(f, 300, found);
            }
            assertThat(found[17]).isZero();
            assertThat(found[200]).isZero();
            assertThat(found[16]).isEqualTo(1016);
            assertThat(Arrays.stream(found).filter(p -> p != 0).count()).isEqualTo(298);
        } finally {
            second.close();
        }
    }

    private static byte[] concat(byte[] f, int a, int b) {
        byte[] out = new byte[64];
        System.arraycopy(f, a * 32, out, 0, 32);
        System.arraycopy(f, b * 32, out, 32, 32);
        return out;
    }
}
