package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotCommitTest {
    private static final VolumeId VOL = new VolumeId("vol-a");
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private MetadataDb db;
    private Catalog catalog;

    @BeforeEach
    void open() {
        db = MetadataDb.open(dir);
        catalog = new Catalog(db);
    }

    @AfterEach
    void close() {
        db.close();
    }

    private void reopen() {
        db.close();
        open();
    }

    private CommittedSnapshot commit(CommitHook hook, long parent, long blocks, long... lbnPbnPairs) {
        SessionMap m = new SessionMap(4);
        for (int i = 0; i < lbnPbnPairs.length; i += 2) {
            m.add(lbnPbnPairs[i], lbnPbnPairs[i + 1]);
        }
        return new SnapshotCommit(catalog, hook, Clock.systemUTC())
                .commit(new SnapshotCommit.Request(VOL, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0));
    }

    private CommittedSnapshot commit(long parent, long blocks, long... lbnPbnPairs) {
        return commit(CommitHook.NONE, parent, blocks, lbnPbnPairs);
    }

    /** The whole image of snapshot seq as PBNs, through the ordered scan. */
    private long[] image(long seq, long blocks) {
        long[] img = new long[(int) blocks];
        VolumeRecord v = catalog.requireVolume(VOL);
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            c.startScan(seq, 0, blocks);
            while (c.nextMapped()) {
                img[(int) c.lbn()] = c.pbn();
            }
        }
        return img;
    }

    @Test
    void commit_firstSnapshot_createsVolumeAndDeltaOfNonZeroEntries() {
        CommittedSnapshot c = commit(0, 4, 0, 10, 1, 0, 2, 12);
        assertThat(c.snapshot().sequence()).isEqualTo(1);
        assertThat(c.volume().latestSequence()).isEqualTo(1);
        assertThat(c.delta().asList()).containsExactly(new DeltaEntry(0, 0, 0, 10), new DeltaEntry(2, 0, 0, 12));
        assertThat(catalog.volumes()).extracting(VolumeRecord::name).containsExactly(VOL);
        assertThat(image(1, 4)).containsExactly(10, 0, 12, 0);
    }

    @Test
    void commit_secondSnapshot_deltaHoldsOnlyChangesWithBirthSequences() {
        commit(0, 4, 0, 10, 1, 11, 2, 12);
        CommittedSnapshot c = commit(1, 4, 0, 10, 1, 21, 2, 0, 3, 23);
        assertThat(c.delta().asList()).containsExactly(
                new DeltaEntry(1, 11, 1, 21), new DeltaEntry(2, 12, 1, 0), new DeltaEntry(3, 0, 0, 23));
        assertThat(c.snapshot().changedBlocks()).isEqualTo(3);
    }

    @Test
    void commit_spillingSession_deltaSpillsBesideItWithTheSameBound_hookReadsItAllThenTheFileIsGone() throws Exception {
        Path spill = dir.resolveSibling(dir.getFileName() + "-spill");
        java.nio.file.Files.createDirectories(spill);
        commit(0, 3000, 5, 105);
        SessionMap m = new SessionMap(spill.resolve("session-7-ab.spill"), 1024);
        for (long lbn = 0; lbn < 3000; lbn++) {
            m.add(lbn, lbn == 5 ? 105 : 1000 + lbn);
        }
        long[] seen = {0, 0, -1};
        boolean[] spilled = {false};
        CommitHook hook = (c, batch) -> {
            spilled[0] = c.delta().spilledEntries() > 0 && java.nio.file.Files.exists(spill.resolve("session-7-ab-delta.spill"));
            try (SnapshotDelta.Cursor e = c.delta().cursor()) {
                while (e.next()) {
                    assertThat(e.lbn()).isGreaterThan(seen[2]);
                    assertThat(e.newPbn()).isEqualTo(1000 + e.lbn());
                    assertThat(e.beforePbn()).isZero();
                    seen[0]++;
                    seen[2] = e.lbn();
                }
            }
            return CommitHook.AfterCommit.NOTHING;
        };
        try (m) {
            CommittedSnapshot c = new SnapshotCommit(catalog, hook, Clock.systemUTC())
                    .commit(new SnapshotCommit.Request(VOL, BS, 3000L * BS, 1, m, 3000L * BS, 3000, 3000, 0));
            assertThat(c.snapshot().changedBlocks()).isEqualTo(2999);
            assertThat(c.delta().size()).isEqualTo(2999);
        }
        assertThat(seen[0]).isEqualTo(2999);
        assertThat(spilled[0]).as("the delta of 2999 entries spilled past its 1024-entry buffer").isTrue();
        try (var files = java.nio.file.Files.list(spill)) {
            assertThat(files).as("no spill file is left").isEmpty();
        }
        long[] img = image(2, 3000);
        assertThat(img[5]).isEqualTo(105);
        assertThat(img[2999]).isEqualTo(3999);
    }

    private CommittedSnapshot chunked(SnapshotCommit commit, long parent, long blocks, long base) {
        SessionMap m = new SessionMap(16);
        for (long lbn = 0; lbn < blocks; lbn++) {
            m.add(lbn, base + lbn);
        }
        return commit.commit(new SnapshotCommit.Request(VOL, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0));
    }

    private long entriesBornAfter(long seq) {
        long[] n = {0};
        catalog.forEachMapEntry(catalog.requireVolume(VOL).internalId(), (lbn, birth, pbn) -> {
            if (birth > seq) {
                n[0]++;
            }
            return true;
        });
        return n[0];
    }

    @Test
    void commit_deltaLargerThanAChunk_writtenInChunks_sameImage_noMarkLeft() {
        SnapshotCommit commit = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC(), 4);
        chunked(commit, 0, 20, 100);
        CommittedSnapshot c = chunked(commit, 1, 22, 200);
        assertThat(c.snapshot().changedBlocks()).isEqualTo(22);
        assertThat(image(1, 20)).containsExactly(java.util.stream.LongStream.range(100, 120).toArray());
        assertThat(image(2, 22)).containsExactly(java.util.stream.LongStream.range(200, 222).toArray());
        assertThat(new CommitIntents(catalog).all()).isEmpty();
    }

    @Test
    void commit_killedAfterEachMapChunk_nothingVisible_leftoversGoWhenTheNextCommitOpens_thenItCommits() {
        for (int k = 1; k <= 4; k++) { // 20 entries in chunks of 4: four chunks are written before the switch
            SnapshotCommit commit = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC(), 4);
            long parent = catalog.volume(VOL).map(VolumeRecord::latestSequence).orElse(0L);
            if (parent == 0) {
                parent = chunked(commit, 0, 20, 100).snapshot().sequence();
            }
            long[] before = image(parent, 20);
            KillPoints.arm(KillPoints.COMMIT_AFTER_MAP_CHUNK, k, KillPoints.Mode.THROW);
            long p = parent;
            long base = 1000L * (k + 1);
            try {
                assertThatThrownBy(() -> chunked(commit, p, 20, base)).isInstanceOf(KillPoints.Killed.class);
            } finally {
                KillPoints.disarm();
            }
            reopen(); // the crash: what was written stays in the catalog's log
            assertThat(catalog.requireVolume(VOL).latestSequence()).as("kill after chunk " + k).isEqualTo(parent);
            assertThat(catalog.snapshots(VOL)).hasSize((int) parent);
            assertThat(entriesBornAfter(parent)).as("the chunks written before the kill are there").isEqualTo(4L * k);
            assertThat(new CommitIntents(catalog).all()).containsEntry(catalog.requireVolume(VOL).internalId(), parent + 1);
            SnapshotCommit next = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC(), 4);
            assertThat(entriesBornAfter(parent)).as("removed at open").isZero();
            assertThat(new CommitIntents(catalog).all()).isEmpty();
            assertThat(image(parent, 20)).containsExactly(before);
            CommittedSnapshot c = chunked(next, parent, 20, 1000L * (k + 1));
            assertThat(c.snapshot().changedBlocks()).isEqualTo(20);
            assertThat(image(parent + 1, 20)).containsExactly(java.util.stream.LongStream.range(1000L * (k + 1), 1000L * (k + 1) + 20).toArray());
        }
    }

    @Test
    void commit_hookFailsAfterChunks_nothingVisible_nextCommitOfTheSameObjectSeesTheParent() {
        SnapshotCommit commit = new SnapshotCommit(catalog, (c, b) -> {
            if (c.snapshot().sequence() == 2) {
                throw new IllegalStateException("refused");
            }
            return CommitHook.AfterCommit.NOTHING;
        }, Clock.systemUTC(), 4);
        chunked(commit, 0, 20, 100);
        assertThatThrownBy(() -> chunked(commit, 1, 20, 300)).hasMessage("refused");
        assertThat(catalog.requireVolume(VOL).latestSequence()).isEqualTo(1);
        assertThat(entriesBornAfter(1)).as("the failed commit's chunks are still there").isEqualTo(16);
        // a commit that keeps most blocks: its delta must come from snapshot 1, not from the failed one's entries
        SessionMap m = new SessionMap(4);
        m.add(3, 999);
        assertThatThrownBy(() -> commit.commit(new SnapshotCommit.Request(VOL, BS, 20L * BS, 1, m, BS, 1, 1, 0)))
                .hasMessage("refused"); // same object: it cleaned first, then its hook refused again
        assertThat(entriesBornAfter(1)).isZero();
        SnapshotCommit plain = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC(), 4);
        SessionMap m2 = new SessionMap(4);
        m2.add(3, 999);
        CommittedSnapshot c = plain.commit(new SnapshotCommit.Request(VOL, BS, 20L * BS, 1, m2, BS, 1, 1, 0));
        assertThat(c.delta().asList()).containsExactly(new DeltaEntry(3, 103, 1, 999));
        long[] img = image(2, 20);
        assertThat(img[3]).isEqualTo(999);
        assertThat(img[4]).isEqualTo(104);
    }

    @Test
    void mapRead_eachSnapshot_seesNewestEntryNotNewerThanIt() {
        Random r = new Random(5);
        int blocks = 64;
        List<long[]> expected = new ArrayList<>();
        long[] current = new long[blocks];
        for (int seq = 1; seq <= 12; seq++) {
            List<Long> pairs = new ArrayList<>();
            for (int lbn = 0; lbn < blocks; lbn++) {
                if (r.nextInt(4) == 0) {
                    long pbn = r.nextInt(3) == 0 ? 0 : 1000L * seq + lbn;
                    current[lbn] = pbn;
                    pairs.add((long) lbn);
                    pairs.add(pbn);
                }
            }
            commit(seq - 1, blocks, pairs.stream().mapToLong(Long::longValue).toArray());
            expected.add(current.clone());
        }
        VolumeRecord v = catalog.requireVolume(VOL);
        for (int seq = 1; seq <= 12; seq++) {
            assertThat(image(seq, blocks)).as("snapshot %d", seq).containsExactly(expected.get(seq - 1));
            try (MapCursor c = catalog.mapCursor(v.internalId())) {
                for (int lbn = 0; lbn < blocks; lbn += 7) {
                    c.seekAtOrBefore(lbn, seq);
                    assertThat(c.pbn()).isEqualTo(expected.get(seq - 1)[lbn]);
                }
            }
        }
        // a partial scan starting mid-volume
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            c.startScan(6, 40, 50);
            while (c.nextMapped()) {
                assertThat(c.lbn()).isBetween(40L, 49L);
                assertThat(c.pbn()).isEqualTo(expected.get(5)[(int) c.lbn()]);
            }
        }
    }

    @Test
    void commit_shrink_zeroesLbnsPastTheNewEnd() {
        commit(0, 8, 0, 10, 5, 15, 7, 17);
        CommittedSnapshot c = commit(1, 6);
        assertThat(c.delta().asList()).containsExactly(new DeltaEntry(7, 17, 1, 0));
        // growing again must not resurrect the old block at LBN 7
        commit(2, 8, 0, 10);
        assertThat(image(3, 8)).containsExactly(10, 0, 0, 0, 0, 15, 0, 0);
        assertThat(image(1, 8)).containsExactly(10, 0, 0, 0, 0, 15, 0, 17);
    }

    @Test
    void commit_hookThrowsBeforeBatchIsWritten_previousStateIntactAlsoAfterReopen() {
        commit(0, 4, 0, 10, 1, 11);
        CommitHook failing = (commit, batch) -> {
            throw new IllegalStateException("crash before the batch is written");
        };
        assertThatThrownBy(() -> commit(failing, 1, 2, 0, 20, 1, 21)).hasMessageContaining("crash");
        assertThat(catalog.requireVolume(VOL).latestSequence()).isEqualTo(1);
        assertThat(catalog.snapshots(VOL)).hasSize(1);
        reopen();
        assertThat(catalog.requireVolume(VOL).latestSequence()).isEqualTo(1);
        assertThat(catalog.requireVolume(VOL).volumeBytes()).isEqualTo(4L * BS);
        assertThat(image(1, 4)).containsExactly(10, 11, 0, 0);
        assertThat(image(Long.MAX_VALUE - 1, 4)).as("no entry of the failed commit is visible").containsExactly(10, 11, 0, 0);
        CommittedSnapshot next = commit(1, 4, 1, 31);
        assertThat(next.snapshot().sequence()).isEqualTo(2);
    }

    @Test
    void commit_hookWritesGoIntoTheSameBatch() {
        Map<Long, Long> seen = new HashMap<>();
        CommitHook recording = (commit, batch) -> {
            db.putMetaLong(batch, "test.hook", commit.snapshot().sequence());
            return () -> seen.put(commit.snapshot().sequence(), (long) commit.delta().size());
        };
        commit(recording, 0, 4, 0, 10);
        reopen();
        assertThat(db.metaLong("test.hook", -1)).isEqualTo(1);
        assertThat(seen).containsEntry(1L, 1L);
    }

    @Test
    void commit_parentMoved_rejectedAndNothingWritten() {
        commit(0, 4, 0, 10);
        assertThatThrownBy(() -> commit(0, 4, 0, 99)).isInstanceOf(CommitRejectedException.class)
                .extracting(e -> ((CommitRejectedException) e).reason()).isEqualTo(CommitRejectedException.Reason.PARENT_MOVED);
        assertThat(image(1, 4)).containsExactly(10, 0, 0, 0);
    }

    @Test
    void commit_blockSizeDiffers_rejected() {
        commit(0, 4, 0, 10);
        SessionMap m = new SessionMap(1);
        assertThatThrownBy(() -> new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC())
                .commit(new SnapshotCommit.Request(VOL, 2 * BS, 4L * BS, 1, m, 0, 0, 0, 0)))
                .isInstanceOf(CommitRejectedException.class).hasMessageContaining("block size");
    }

    @Test
    void forEachMapEntry_andDeletes_seeAllVersionsAndRemoveThem() {
        commit(0, 4, 0, 10, 1, 11);
        commit(1, 4, 0, 20);
        VolumeRecord v = catalog.requireVolume(VOL);
        List<long[]> entries = new ArrayList<>();
        catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> entries.add(new long[] {lbn, birth, pbn}));
        assertThat(entries).containsExactly(new long[] {0, 2, 20}, new long[] {0, 1, 10}, new long[] {1, 1, 11});
        try (MetadataBatch b = new MetadataBatch()) {
            catalog.deleteMapEntry(b, v.internalId(), 0, 1);
            catalog.deleteSnapshot(b, v, 1);
            catalog.write(b);
        }
        assertThat(catalog.snapshots(VOL)).extracting(SnapshotRecord::sequence).containsExactly(2L);
        assertThat(image(2, 4)).containsExactly(20, 11, 0, 0);
    }

    @Test
    void requireSnapshot_unknown_throwsNamedExceptions() {
        commit(0, 4, 0, 10);
        assertThatThrownBy(() -> catalog.requireSnapshot(new VolumeId("nope"), 1)).isInstanceOf(UnknownVolumeException.class);
        assertThatThrownBy(() -> catalog.requireSnapshot(VOL, 9)).isInstanceOf(UnknownSnapshotException.class);
    }
}
