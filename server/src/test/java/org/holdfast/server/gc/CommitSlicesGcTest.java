package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commits whose entry counts sit on the commit path's slice boundaries ({@link SnapshotCommit#SLICE}
 * = 64: 1, 63, 64, 65, 129, 4097 entries) with shared, unchanged, re-sent-unchanged, moved, changed
 * and cut-off blocks, their GC bookkeeping logged as one operation or in parts (64 and 100 entries a
 * part: views of the in-memory delta), once with a crash in the middle of the parts: an entry
 * skipped or doubled anywhere leaves a reference count that fsck finds, or a block the GC frees while
 * the newest snapshot still maps it.
 */
class CommitSlicesGcTest {
    private static final int BS = 4096;
    private static final long HOUR = 3_600_000L;
    private static final int[] SIZES = {1, 63, 64, 65, 129, 4097};
    private static final int OLD = 130;
    private static final int NEW = 70;
    private static final int DOOMED = 30;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private GcStoreFixture f;

    @AfterEach
    void close() {
        KillPoints.disarm();
        if (f != null) {
            f.close();
        }
    }

    private GcStoreFixture open(Path at, int partEntries) {
        return GcStoreFixture.open(at, clock, 1L << 22, Duration.ofHours(2), 8, hook -> hook, partEntries);
    }

    private static VolumeId vol(int n) {
        return new VolumeId("slices-" + n);
    }

    /** Snapshot 1 of the volume of {@code n} LBNs: pool blocks shared by every volume; the 129-volume's changing LBNs hold blocks only it maps. */
    private static long[] first(int n, long[] old, long[] doomed) {
        long[] m = new long[n];
        for (int i = 0; i < n; i++) {
            m[i] = n == 129 && i % 3 == 1 && i / 3 < DOOMED ? doomed[i / 3] : old[i % OLD];
        }
        return m;
    }

    /**
     * Snapshot 2's session over the volume cut to {@code n2} LBNs: 0 = not sent (unchanged); every third
     * entry re-sent with its unchanged PBN (no delta entry), one in three a new block, one in three
     * another LBN's old block (a move: the same PBN twice in a volume).
     */
    private static long[] second(int n2, long[] one, long[] old, long[] fresh) {
        long[] m = new long[n2];
        for (int i = 0; i < n2; i++) {
            m[i] = switch (i % 3) {
                case 0 -> i % 2 == 0 ? one[i] : 0;
                case 1 -> fresh[i % NEW];
                default -> old[(i + 1) % OLD];
            };
        }
        return m;
    }

    private static int cut(int n) {
        return n > 8 ? n - 7 : n; // the new end falls inside a slice
    }

    private long commit(int n, long parent, long[] session, long blocks) {
        SessionMap m = new SessionMap(64);
        for (int i = 0; i < session.length; i++) {
            if (session[i] != 0) {
                m.add(i, session[i]);
            }
        }
        return f.commit.commit(new SnapshotCommit.Request(vol(n), BS, blocks * BS, parent, m, m.size() * (long) BS,
                m.size(), m.size(), 0)).snapshot().sequence();
    }

    private long[] snapshot(int n, long seq, long blocks) {
        return SnapshotScan.pbns(f.catalog, f.catalog.requireVolume(vol(n)).internalId(), seq, blocks);
    }

    private long[] store(int count, long seed) {
        long[] p = new long[count];
        for (int i = 0; i < count; i++) {
            p[i] = f.storeBlock(seed + i, BS);
        }
        return p;
    }

    private void assertClean(String ctx) {
        FsckReport r = f.gc.fsck(clock.millis);
        assertThat(r.clean()).as(ctx + ": " + r.toText()).isTrue();
    }

    private static long[] merged(long[] one, long[] session, int n2) {
        long[] out = new long[n2];
        for (int i = 0; i < n2; i++) {
            out[i] = session[i] != 0 ? session[i] : one[i];
        }
        return out;
    }

    private void run(String name, int partEntries, KillPoint kill, int killAt) {
        Path at = dir.resolve(name);
        f = open(at, partEntries);
        long[] old = store(OLD, 1000);
        long[] doomed = store(DOOMED, 5000);
        long[][] ones = new long[SIZES.length][];
        for (int k = 0; k < SIZES.length; k++) {
            int n = SIZES[k];
            ones[k] = first(n, old, doomed);
            assertThat(commit(n, 0, ones[k], n)).isEqualTo(1);
            assertThat(snapshot(n, 1, n)).as(name + " n=" + n).containsExactly(ones[k]);
        }
        assertClean(name + " after the first snapshots");
        clock.millis += HOUR;
        long[] fresh = store(NEW, 9000);
        for (long p : old) {
            assertThat(f.gc.guard().protect(p)).isTrue(); // sessions reuse them
        }
        long[][] wants = new long[SIZES.length][];
        for (int k = 0; k < SIZES.length; k++) {
            int n = SIZES[k];
            int n2 = cut(n);
            long[] session = second(n2, ones[k], old, fresh);
            wants[k] = merged(ones[k], session, n2);
            if (kill != null && n == 4097) {
                KillPoints.arm(kill, killAt, KillPoints.Mode.THROW);
                assertThatThrownBy(() -> commit(n, 1, session, n2)).isInstanceOf(KillPoints.Killed.class);
                KillPoints.disarm();
                f.abandon();
                f = open(at, partEntries); // the re-drive logs what the crash left out, reading the map
                assertThat(f.catalog.requireVolume(vol(n)).latestSequence()).isEqualTo(2);
            } else {
                assertThat(commit(n, 1, session, n2)).isEqualTo(2);
            }
            assertThat(snapshot(n, 2, n2)).as(name + " n=" + n).containsExactly(wants[k]);
        }
        assertClean(name + " after the second snapshots");
        clock.millis += 30 * HOUR; // every snapshot 1 expires (12h policy)
        f.gc.runCycle(clock.millis);
        StoredBlock sb = new StoredBlock();
        for (int k = 0; k < SIZES.length; k++) {
            int n = SIZES[k];
            assertThat(f.catalog.snapshots(vol(n))).as(name + " n=" + n).hasSize(1);
            for (long p : snapshot(n, 2, cut(n))) {
                assertThat(f.store.fingerprint(p, sb)).as(name + " n=" + n + ": PBN " + p + " of the newest snapshot").isTrue();
            }
        }
        for (long p : doomed) {
            assertThat(f.store.fingerprint(p, sb)).as(name + ": PBN " + p + " only the expired snapshot mapped is freed").isFalse();
        }
        assertClean(name + " after the cycle");
        f.close();
        f = null;
    }

    @Test
    void oneOperationPerCommit_viewOfTheWholeDelta_noBlockLostOrLeaked() {
        run("single", CommitParts.DEFAULT_PART_ENTRIES, null, 0);
    }

    @Test
    void partsOfASlice_andPartsAcrossSlices_noBlockLostOrLeaked() {
        run("parts64", 64, null, 0);
        run("parts100", 100, null, 0);
    }

    @Test
    void crashInTheMiddleOfViewParts_redriveFromTheMap_noBlockLostOrLeaked() {
        run("kill-part", 100, KillPoints.COMMIT_AFTER_GC_PART, 3);
        run("kill-batch", CommitParts.DEFAULT_PART_ENTRIES, KillPoints.COMMIT_AFTER_CATALOG_BATCH, 1);
    }
}
