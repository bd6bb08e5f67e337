package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The shared contract for the Sungem engine, plus its own restart and forget behaviour. */
public class SungemFingerprintIndexTest extends FingerprintIndexContractTest {

    public static SungemSettings smallSettings() {
        return SungemSettings.defaults().withContainerCacheBytes(8L << 20).withSfiBytes(1L << 20)
                .withShape(256, 2, 2, 16, 8, 1024).withBloom(Duration.ofDays(1), 3, 100_000, 0.01);
    }

    @Override
    protected FingerprintIndex openIndex(Path dir) {
        return new SungemFingerprintIndex(dir.resolve("sungem"), smallSettings(), Clock.systemUTC());
    }

    static long[] seq(long first, int n) {
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = first + i;
        }
        return p;
    }

    static boolean[] trues(int n) {
        boolean[] b = new boolean[n];
        Arrays.fill(b, true);
        return b;
    }

    @Test
    void restart_duplicateStreamAfterReopen_isFoundInFull() {
        byte[] f = fps(21, 2000);
        try (DedupStream s = index().openStream("a")) {
            long[] found = new long[2000];
            s.lookup(f, 2000, found);
            s.record(f, 2000, seq(1, 2000), trues(2000));
        }
        restart();
        long[] found = new long[2000];
        try (DedupStream s = index().openStream("b")) {
            s.lookup(f, 2000, found);
        }
        assertThat(found).containsExactly(seq(1, 2000));
    }

    @Test
    void forget_containerReloadedFromDisk_purgesAndNeverReturnsIt() {
        byte[] f = fps(22, 600);
        try (DedupStream s = index().openStream("a")) {
            long[] found = new long[600];
            s.lookup(f, 600, found);
            s.record(f, 600, seq(100, 600), trues(600));
        }
        index().flush();
        index().forget(100 + 7, f, 7 * 32);
        SungemFingerprintIndex sungem = (SungemFingerprintIndex) index();
        sungem.flush();
        sungem.containerStore().dropCacheForTest();
        long[] found = new long[600];
        try (DedupStream s = index().openStream("b")) {
            s.lookup(f, 600, found);
        }
        assertThat(found[7]).isZero();
        assertThat(found[6]).isEqualTo(106);
        assertThat(found[8]).isEqualTo(108);
        restart();
        try (DedupStream s = index().openStream("c")) {
            s.lookup(f, 600, found);
        }
        assertThat(found[7]).isZero();
        assertThat(found[599]).isEqualTo(699);
    }

    @Test
    void restart_cleanShutdownKeepsSfiSnapshot_tornSnapshotIsRebuiltInstead() throws Exception {
        byte[] f = fps(23, 1500);
        try (DedupStream s = index().openStream("a")) {
            long[] found = new long[1500];
            s.lookup(f, 1500, found);
            s.record(f, 1500, seq(1, 1500), trues(1500));
        }
        restart(); // clean close writes sungem/sfi.snapshot, the reopen loads and deletes it
        Path snap = dir.resolve("sungem").resolve("sungem").resolve("sfi.snapshot");
        assertThat(java.nio.file.Files.exists(snap)).isFalse();
        long[] found = new long[1500];
        try (DedupStream s = index().openStream("b")) {
            s.lookup(f, 1500, found);
        }
        assertThat(found).containsExactly(seq(1, 1500));
        index().close();
        byte[] data = java.nio.file.Files.readAllBytes(snap);
        data[data.length / 2] ^= 0x40;
        java.nio.file.Files.write(snap, data);
        FingerprintIndex reopened = openIndex(dir);
        try (DedupStream s = reopened.openStream("c")) {
            s.lookup(f, 1500, found);
        } finally {
            reopened.close();
        }
        assertThat(found).as("rebuilt from the containers").containsExactly(seq(1, 1500));
    }
}
