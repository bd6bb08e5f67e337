package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
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
 * A commit's GC bookkeeping logged in parts (8 delta entries a part here): the counts come out as
 * one operation would leave them, and a crash after any part, or before the first, loses nothing:
 * the snapshot is whole, the re-drive at the next start logs exactly the missing parts, fsck is
 * clean, and a GC cycle frees only what no retained snapshot references.
 */
class GcCommitPartsTest {
    private static final VolumeId VOL = new VolumeId("parts-vol");
    private static final int BS = 4096;
    private static final int PART = 8;
    private static final int BLOCKS = 40;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private GcStoreFixture f;

    private void open() {
        f = GcStoreFixture.open(dir, clock, 1L << 20, Duration.ofHours(2), 8, hook -> hook, PART);
    }

    @AfterEach
    void close() {
        KillPoints.disarm();
        if (f != null) {
            f.close();
        }
    }

    private void crashAndReopen() {
        f.abandon();
        open();
    }

    private long block(long seed) {
        return f.storeBlock(seed, BS);
    }

    /** Commits {@code map} (LBN i → map[i], 0 = not sent) on {@code parent}. */
    private long commit(long parent, long[] map) {
        SessionMap m = new SessionMap(BLOCKS);
        for (int i = 0; i < map.length; i++) {
            if (map[i] != 0) {
                m.add(i, map[i]);
            }
        }
        return f.commit.commit(new SnapshotCommit.Request(VOL, BS, BLOCKS * (long) BS, parent, m, m.size() * (long) BS,
                m.size(), m.size(), 0)).snapshot().sequence();
    }

    private long[] snapshot(long seq) {
        return SnapshotScan.pbns(f.catalog, f.catalog.requireVolume(VOL).internalId(), seq, BLOCKS);
    }

    private boolean stored(long pbn) {
        return f.store.fingerprint(pbn, new StoredBlock());
    }

    private void assertClean() {
        FsckReport r = f.gc.fsck(clock.millis);
        assertThat(r.clean()).as(r.toText()).isTrue();
    }

    /** Snapshot 1: 40 new blocks (10 parts). Answers its PBNs. */
    private long[] first() {
        long[] one = new long[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            one[i] = block(1000 + i);
        }
        assertThat(commit(0, one)).isEqualTo(1);
        return one;
    }

    /** Snapshot 2's session: 30 LBNs get new blocks, LBN 1 takes LBN 0's block (a move within the commit). */
    private long[] second(long[] one) {
        long[] two = new long[BLOCKS];
        for (int i = 0; i < 30; i++) {
            two[i] = block(2000 + i);
        }
        two[1] = one[0];
        assertThat(f.gc.guard().protect(one[0])).isTrue();
        return two;
    }

    @Test
    void largeCommits_loggedInParts_countsAsOneOperationWould_cycleFreesOnlyTheReplaced() {
        open();
        long before = f.gc.lastAppliedOp();
        long[] one = first();
        assertThat(f.gc.lastAppliedOp()).as("40 entries: 5 increments parts, 5 decrements parts").isEqualTo(before + 10);
        clock.millis += HOUR;
        long[] two = second(one);
        assertThat(commit(1, two)).isEqualTo(2);
        assertThat(f.gc.lastAppliedOp()).as("30 entries: 4 + 4 parts").isEqualTo(before + 18);
        assertClean();
        clock.millis += 30 * HOUR; // snapshot 1 expires (12h policy): its replaced blocks go, LBN 0's moved block stays
        f.gc.runCycle(clock.millis);
        assertThat(f.catalog.snapshots(VOL)).hasSize(1);
        long[] now = snapshot(2);
        for (long p : now) {
            assertThat(stored(p)).as("PBN " + p + " of the retained snapshot").isTrue();
        }
        for (int i = 2; i < 30; i++) {
            assertThat(stored(one[i])).as("replaced PBN " + one[i]).isFalse();
        }
        assertClean();
    }

    @Test
    void trim_keepsACommitRecordUntilItsLastPartIsDurable() {
        open();
        long before = f.gc.lastAppliedOp();
        first();
        long id = before + 1;
        assertThat(f.gc.records().opsUpTo(id)).extracting(GcRecords.Op::parts).containsExactly(10);
        f.gc.operations().trimUpTo(id + 8); // the GC log's durable mark inside the commit's range
        assertThat(f.gc.records().opAtOrBefore(id + 8)).as("still needed by a re-drive").isPresent();
        f.gc.operations().trimUpTo(id + 9);
        assertThat(f.gc.records().opAtOrBefore(id + 9)).as("every part durable: trimmed").isEmpty();
    }

    @Test
    void killedBeforeTheFirstPartOrAfterAnyPart_restartLogsTheRest_nothingReferencedIsFreed() {
        // snapshot 1 has 10 parts, snapshot 2 has 8: kill each commit before its parts and after each but the last
        for (int snap = 1; snap <= 2; snap++) {
            int parts = snap == 1 ? 10 : 8;
            for (int k = 0; k < parts; k++) {
                Path run = dir.resolve("s" + snap + "-k" + k);
                f = GcStoreFixture.open(run, clock, 1L << 20, Duration.ofHours(2), 8, hook -> hook, PART);
                long[] one = snap == 1 ? null : first();
                long[] session = snap == 1 ? null : second(one);
                long start = f.gc.lastAppliedOp();
                KillPoint point = k == 0 ? KillPoints.COMMIT_AFTER_CATALOG_BATCH : KillPoints.COMMIT_AFTER_GC_PART;
                KillPoints.arm(point, Math.max(1, k), KillPoints.Mode.THROW);
                long[] map;
                if (snap == 1) {
                    map = new long[BLOCKS];
                    for (int i = 0; i < BLOCKS; i++) {
                        map[i] = block(1000 + i);
                    }
                } else {
                    map = session;
                }
                long[] m = map;
                long parent = snap - 1;
                assertThatThrownBy(() -> commit(parent, m)).isInstanceOf(KillPoints.Killed.class);
                KillPoints.disarm();
                f.abandon();
                f = GcStoreFixture.open(run, clock, 1L << 20, Duration.ofHours(2), 8, hook -> hook, PART);
                String ctx = "snapshot " + snap + " killed after " + k + " of " + parts + " parts";
                // the catalog batch was durable before any part: the snapshot exists, whole
                assertThat(f.catalog.requireVolume(VOL).latestSequence()).as(ctx).isEqualTo(snap);
                long[] got = snapshot(snap);
                long[] want = snap == 1 ? map : merged(one, session);
                assertThat(got).as(ctx).containsExactly(Arrays.stream(want).filter(p -> p != 0).toArray());
                assertThat(f.gc.lastAppliedOp()).as(ctx + ": every part is in the GC log after the re-drive").isEqualTo(start + parts);
                assertClean();
                // and the next commit counts on after the parts' ids
                long[] three = new long[BLOCKS];
                three[BLOCKS - 1] = block(3000 + k);
                commit(snap, three);
                assertThat(f.gc.lastAppliedOp()).as(ctx).isEqualTo(start + parts + 1);
                clock.millis += 30 * HOUR;
                f.gc.runCycle(clock.millis);
                for (long p : snapshot(f.catalog.requireVolume(VOL).latestSequence())) {
                    assertThat(stored(p)).as(ctx + ": PBN " + p + " of the newest snapshot").isTrue();
                }
                assertClean();
                f.close();
                f = null;
            }
        }
    }

    @Test
    void killedAfterAnyMapChunk_snapshotAbsent_parentIntact_fsckClean_retryCommits_nothingReferencedIsFreed() {
        // snapshot 2's 30 entries in chunks of 8: three chunks are written before the switch
        for (int k = 1; k <= 3; k++) {
            Path run = dir.resolve("chunk-k" + k);
            f = GcStoreFixture.open(run, clock, 1L << 20, Duration.ofHours(2), 8, hook -> hook, PART);
            long[] one = first();
            long[] session = second(one);
            long start = f.gc.lastAppliedOp();
            KillPoints.arm(KillPoints.COMMIT_AFTER_MAP_CHUNK, k, KillPoints.Mode.THROW);
            assertThatThrownBy(() -> commit(1, session)).isInstanceOf(KillPoints.Killed.class);
            KillPoints.disarm();
            f.abandon();
            f = GcStoreFixture.open(run, clock, 1L << 20, Duration.ofHours(2), 8, hook -> hook, PART);
            String ctx = "killed after map chunk " + k;
            assertThat(f.catalog.requireVolume(VOL).latestSequence()).as(ctx + ": no snapshot 2").isEqualTo(1);
            assertThat(f.catalog.snapshots(VOL)).hasSize(1);
            assertThat(snapshot(1)).as(ctx).containsExactly(one);
            long[] born = {0};
            f.catalog.forEachMapEntry(f.catalog.requireVolume(VOL).internalId(), (lbn, birth, pbn) -> {
                born[0] += birth > 1 ? 1 : 0;
                return true;
            });
            assertThat(born[0]).as(ctx + ": the chunks' entries are gone").isZero();
            assertThat(f.gc.lastAppliedOp()).as(ctx + ": no GC operation for the snapshot that never was").isEqualTo(start);
            assertClean();
            // the agent's retry: the same session again (its blocks are protected anew, as a new session's would be)
            for (long p : session) {
                if (p != 0) {
                    assertThat(f.gc.guard().protect(p)).isTrue();
                }
            }
            assertThat(commit(1, session)).isEqualTo(2);
            assertThat(snapshot(2)).as(ctx).containsExactly(Arrays.stream(merged(one, session)).filter(p -> p != 0).toArray());
            assertClean();
            clock.millis += 30 * HOUR;
            f.gc.runCycle(clock.millis);
            for (long p : snapshot(2)) {
                assertThat(stored(p)).as(ctx + ": PBN " + p + " of the newest snapshot").isTrue();
            }
            assertClean();
            f.close();
            f = null;
        }
    }

    private static long[] merged(long[] one, long[] session) {
        long[] out = one.clone();
        for (int i = 0; i < session.length; i++) {
            if (session[i] != 0) {
                out[i] = session[i];
            }
        }
        return out;
    }
}
