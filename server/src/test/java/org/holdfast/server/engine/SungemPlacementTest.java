package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import org.holdfast.server.container.Container;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Placement by relatedness (thesis 5.4.3), stable segments, and the read-only fallback, through the engine. */
class SungemPlacementTest {
    @TempDir
    Path dir;

    private SungemFingerprintIndex index;
    private long nextPbn = 1;

    private SungemFingerprintIndex open() {
        SungemSettings s = SungemSettings.defaults().withContainerCacheBytes(8L << 20).withSfiBytes(1L << 20)
                .withShape(256, 2, 2, 16, 8, 1024).withBloom(Duration.ofDays(1), 3, 100_000, 0.01)
                .withExactFallback(false).withStableLevels(0);
        index = new SungemFingerprintIndex(dir, s, Clock.systemUTC());
        return index;
    }

    @AfterEach
    void close() {
        if (index != null) {
            index.close();
        }
    }

    private static byte[] fps(long seed, int n) {
        byte[] b = new byte[n * 32];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** Looks up and records like the ingest; returns how many were duplicates. */
    private int backup(DedupStream s, byte[] f) {
        int n = f.length / 32;
        long[] p = new long[n];
        boolean[] isNew = new boolean[n];
        s.lookup(f, n, p);
        int dups = 0;
        for (int i = 0; i < n; i++) {
            if (p[i] == 0) {
                p[i] = nextPbn++;
                isNew[i] = true;
            } else {
                dups++;
            }
        }
        s.record(f, n, p, isNew);
        return dups;
    }

    private boolean containerHolds(int id, byte[] f, int i) {
        Container c = index.containerStore().acquire(id);
        try {
            return c != null && c.find(f, i) >= 0;
        } finally {
            if (c != null) {
                index.containerStore().release(c);
            }
        }
    }

    @Test
    void record_allNew_goesToTheStreamsDefaultContainer() {
        open();
        byte[] a = fps(1, 200);
        try (DedupStream s = index.openStream("v")) {
            backup(s, a);
        }
        assertThat(index.containerStore().containerCount()).isEqualTo(1);
        assertThat(containerHolds(1, a, 199)).isTrue();
    }

    @Test
    void record_newRunAfterMatchedRun_isPlacedBesideItsPredecessor() {
        open();
        byte[] a = fps(2, 256);
        try (DedupStream s = index.openStream("first")) {
            backup(s, a);
        }
        byte[] b = fps(3, 128);
        byte[] input = concat(Arrays.copyOf(a, 128 * 32), b);
        try (DedupStream s = index.openStream("second")) {
            assertThat(backup(s, input)).isEqualTo(128);
        }
        assertThat(index.containerStore().containerCount()).as("no default container was needed").isEqualTo(1);
        assertThat(containerHolds(1, b, 0)).isTrue();
        assertThat(index.sungemStats().subSegments()).as("the partial match formed a stored segment").isEqualTo(1);
    }

    @Test
    void record_defaultContainerHalfFull_isReplaced() {
        open();
        try (DedupStream s = index.openStream("v")) {
            for (int i = 0; i < 4; i++) {
                backup(s, fps(10 + i, 200));
            }
        }
        // U_container 1024: three runs of 200 fill the first past half, the fourth opens a second.
        assertThat(index.containerStore().containerCount()).isEqualTo(2);
        assertThat(containerHolds(2, fps(13, 200), 0)).isTrue();
    }

    @Test
    void lookup_segmentMatchedExactlyTBsuTimes_becomesStableWithOneSample() {
        open();
        byte[] a = fps(4, 256);
        try (DedupStream s = index.openStream("v0")) {
            backup(s, a);
        }
        for (int v = 1; v <= 2; v++) {
            try (DedupStream s = index.openStream("v" + v)) {
                assertThat(backup(s, a)).isEqualTo(256);
            }
        }
        SungemStats st = index.sungemStats();
        assertThat(st.exactSegmentMatches()).isEqualTo(2);
        assertThat(st.sfiStabilized()).isEqualTo(1);
        assertThat(st.sfiEntries()).isEqualTo(1);
        try (DedupStream s = index.openStream("v3")) {
            assertThat(backup(s, a)).as("one sample still finds the whole segment").isEqualTo(256);
        }
    }

    @Test
    void record_predecessorContainerLockedByAnother_usesItReadOnlyAndPlacesElsewhere() throws Exception {
        open();
        byte[] a = fps(5, 256);
        try (DedupStream s = index.openStream("first")) {
            backup(s, a);
        }
        Container c1 = index.containerStore().acquire(1);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            c1.lock().writeLock().lock();
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                c1.lock().writeLock().unlock();
            }
        });
        holder.start();
        held.await();
        byte[] b = fps(6, 64);
        byte[] input = concat(Arrays.copyOf(a, 64 * 32), b);
        DedupStream s = index.openStream("second");
        long[] p = new long[128];
        // The lookup needs the read lock: let it run in full first, then contend on record.
        release.countDown();
        holder.join();
        s.lookup(input, 128, p);
        c1.lock().writeLock().lock();
        Thread recorder = new Thread(() -> {
            boolean[] isNew = new boolean[128];
            for (int i = 64; i < 128; i++) {
                p[i] = 10_000 + i;
                isNew[i] = true;
            }
            s.record(input, 128, p, isNew);
        });
        recorder.start();
        recorder.join();
        c1.lock().writeLock().unlock();
        index.containerStore().release(c1);
        assertThat(index.sungemStats().readOnlyFallbacks()).isPositive();
        assertThat(containerHolds(1, b, 0)).isFalse();
        assertThat(containerHolds(2, b, 0)).isTrue();
        s.close();
    }

    @Test
    void record_afterABatchOfLookups_orWithoutLookup_learnsEverySegment() {
        open();
        byte[][] segs = new byte[6][];
        long[][] p = new long[6][];
        boolean[] all = new boolean[200];
        java.util.Arrays.fill(all, true);
        try (DedupStream s = index.openStream("batch")) {
            for (int k = 0; k < 6; k++) {
                segs[k] = fps(100 + k, 200);
                p[k] = new long[200];
                s.lookup(segs[k], 200, p[k]);
            }
            for (int k = 0; k < 6; k++) {
                for (int i = 0; i < 200; i++) {
                    p[k][i] = 1 + k * 200L + i;
                }
                s.record(segs[k], 200, p[k], all); // recorded long after their lookups, as the ingest does
            }
            byte[] unseen = fps(200, 200);
            long[] q = new long[200];
            for (int i = 0; i < 200; i++) {
                q[i] = 5000 + i;
            }
            s.record(unseen, 200, q, all); // never looked up: the stream looks it up itself
        }
        IndexStats before = index.stats();
        try (DedupStream s = index.openStream("again")) {
            for (int k = 0; k < 6; k++) {
                long[] found = new long[200];
                s.lookup(segs[k], 200, found);
                assertThat(found).containsExactly(p[k]);
            }
            long[] found = new long[200];
            s.lookup(fps(200, 200), 200, found);
            assertThat(found[0]).isEqualTo(5000);
            assertThat(found[199]).isEqualTo(5199);
        }
        assertThat(index.stats().lookups() - before.lookups()).as("only the caller's lookups count").isEqualTo(1400);
    }
}
