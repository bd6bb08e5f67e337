package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract every {@link FingerprintIndex} holds; each implementation's test extends this
 * class. Only exact matches are ever answered; a forgotten PBN is never returned again; what was
 * recorded (after its blocks were durable) is found, also after a restart.
 */
public abstract class FingerprintIndexContractTest {

    @TempDir
    protected Path dir;

    private FingerprintIndex index;

    /** Opens (or reopens, keeping what is in {@code dir}) the index under test. */
    protected abstract FingerprintIndex openIndex(Path dir);

    /** Closes the index and anything the subclass opened for it. */
    protected void closeIndex(FingerprintIndex index) {
        index.close();
    }

    @AfterEach
    void closeAtEnd() {
        if (index != null) {
            closeIndex(index);
        }
    }

    protected FingerprintIndex index() {
        if (index == null) {
            index = openIndex(dir);
        }
        return index;
    }

    protected void restart() {
        index.flush();
        closeIndex(index);
        index = openIndex(dir);
    }

    protected static byte[] fps(long seed, int count) {
        byte[] b = new byte[count * 32];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static long[] pbns(long first, int count) {
        long[] p = new long[count];
        for (int i = 0; i < count; i++) {
            p[i] = first + i;
        }
        return p;
    }

    private static boolean[] all(int count) {
        boolean[] b = new boolean[count];
        java.util.Arrays.fill(b, true);
        return b;
    }

    private void record(String volume, byte[] fps, int count, long firstPbn) {
        try (DedupStream s = index().openStream(volume)) {
            long[] found = new long[count];
            s.lookup(fps, count, found);
            s.record(fps, count, pbns(firstPbn, count), all(count));
        }
        index().flush();
    }

    private long[] lookup(String volume, byte[] fps, int count) {
        long[] found = new long[count];
        try (DedupStream s = index().openStream(volume)) {
            s.lookup(fps, count, found);
        }
        return found;
    }

    @Test
    void lookup_emptyIndex_missesEverything() {
        assertThat(lookup("v", fps(1, 64), 64)).containsOnly(0L);
    }

    @Test
    void record_thenLookup_findsThePbnOfEachFingerprint() {
        byte[] f = fps(2, 128);
        record("v", f, 128, 1000);
        long[] found = lookup("v", f, 128);
        for (int i = 0; i < 128; i++) {
            // sampling engines may miss some; whatever they answer must be exact
            assertThat(found[i]).isIn(0L, 1000L + i);
        }
        assertThat(java.util.Arrays.stream(found).filter(p -> p != 0).count()).as("most are found").isGreaterThan(64);
    }

    @Test
    void lookup_similarButDifferentFingerprints_neverMatch() {
        byte[] f = fps(3, 64);
        record("v", f, 64, 1);
        byte[] g = f.clone();
        for (int i = 0; i < 64; i++) {
            g[i * 32 + 31] ^= 1; // last bit differs
        }
        assertThat(lookup("v", g, 64)).containsOnly(0L);
        byte[] h = f.clone();
        for (int i = 0; i < 64; i++) {
            h[i * 32] ^= (byte) 0x80; // first bit differs
        }
        assertThat(lookup("v", h, 64)).containsOnly(0L);
    }

    @Test
    void forget_pbn_isNeverReturnedAgain() {
        byte[] f = fps(4, 32);
        record("v", f, 32, 500);
        for (int i = 0; i < 32; i += 2) {
            index().forget(500 + i, f, i * 32);
        }
        long[] found = lookup("v", f, 32);
        for (int i = 0; i < 32; i += 2) {
            assertThat(found[i]).isNotEqualTo(500L + i);
        }
        restart();
        found = lookup("v", f, 32);
        for (int i = 0; i < 32; i += 2) {
            assertThat(found[i]).isNotEqualTo(500L + i);
        }
    }

    @Test
    void restart_keepsRecordedEntries() {
        byte[] f = fps(5, 256);
        record("v", f, 256, 7000);
        restart();
        long[] found = lookup("other-volume", f, 256);
        for (int i = 0; i < 256; i++) {
            assertThat(found[i]).isIn(0L, 7000L + i);
        }
        assertThat(java.util.Arrays.stream(found).filter(p -> p != 0).count()).isGreaterThan(0);
    }

    @Test
    void stats_countLookupsAndRecords() {
        byte[] f = fps(6, 16);
        record("v", f, 16, 1);
        lookup("v", f, 16);
        IndexStats s = index().stats();
        assertThat(s.lookups()).isGreaterThanOrEqualTo(32);
        assertThat(s.recorded()).isEqualTo(16);
    }

    @Test
    void stats_busyTime_growsWithLookupAndRecordOnly() {
        byte[] f = fps(7, 64);
        assertThat(index().stats().busyNanos()).isZero();
        record("v", f, 64, 1);
        long afterRecord = index().stats().busyNanos();
        assertThat(afterRecord).isPositive();
        index().forget(1, f, 0);
        index().flush();
        assertThat(index().stats().busyNanos()).as("forget and flush are not dedup time").isEqualTo(afterRecord);
        lookup("v", f, 64);
        assertThat(index().stats().busyNanos()).isGreaterThan(afterRecord);
    }
}
