package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.RestoreInfo;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.DamageReport;
import org.holdfast.server.verify.Verifier;
import org.holdfast.server.verify.VerifyScope;
import org.holdfast.server.verify.VerifySettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bit rot in real data logs behind a real server (loopback socket, RocksDB, exact index): verify
 * finds every damaged block, restore never hands out wrong bytes and names the damage, and a
 * backup of the healthy source repairs the blocks in place so every snapshot restores again.
 */
class BitRotRepairTest {
    private static final int BS = 4096;
    private static final int FLIPPED = 20;

    @TempDir
    Path dir;

    private IngestHarness harness;

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private static byte[] image(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        // half of the blocks compressible, so both stored codecs rot
        for (int i = 0; i < blocks; i += 2) {
            Arrays.fill(b, i * BS + 100, (i + 1) * BS, (byte) (i % 7 + 1));
        }
        return b;
    }

    private Verifier verifier(Duration window) {
        return new Verifier(harness.catalog(), harness.store(), new VerifyLedger(harness.db()),
                new VerifySettings(2, 0, window, null), Clock.systemUTC());
    }

    private DamageReport damage() {
        return new DamageReport(harness.catalog(), harness.store().badBlocks(), new VerifyLedger(harness.db()));
    }

    /** Flips one byte inside the stored bytes of {@code count} random records; returns their PBNs. */
    private Set<Long> flipRecords(int count, long seed) throws IOException {
        List<long[]> all = new ArrayList<>();
        harness.store().locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
            all.add(new long[] {pbn, logId, offset, len});
            return true;
        });
        assertThat(all).hasSizeGreaterThan(count);
        java.util.Collections.shuffle(all, new Random(seed));
        Set<Long> flipped = new TreeSet<>();
        for (long[] r : all.subList(0, count)) {
            Path log = dir.resolve("data").resolve(DataLog.fileName((int) r[1]));
            long at = r[2] + FormatVersions.RECORD_HEADER_BYTES + (r[3] / 2);
            try (FileChannel ch = FileChannel.open(log, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer one = ByteBuffer.allocate(1);
                ch.read(one, at);
                one.put(0, (byte) (one.get(0) ^ 0x20)).rewind();
                ch.write(one, at);
            }
            flipped.add(r[0]);
        }
        return flipped;
    }

    private static Set<Long> badPbns(BadBlocks bad) {
        return bad.all().stream().map(BadBlocks.BadBlock::pbn).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Restores until RESTORE_END or an ERROR; every block received must match the source image. */
    private static ErrorMessage restoreChecking(AgentDriver a, String volume, long seq, byte[] expected) {
        a.send(new Restore(volume, seq, 0));
        RestoreInfo info = a.expect(RestoreInfo.class);
        byte[] block = new byte[info.blockSize()];
        byte[] digest = new byte[32];
        BlockHasher hasher = new BlockHasher();
        try (BlockCodec codec = new BlockCodec()) {
            while (true) {
                Object o = a.next();
                if (o instanceof ErrorMessage e) {
                    return e;
                }
                if (!(o instanceof AgentDriver.DataFrame d)) {
                    assertThat(o).as("end of restore").isInstanceOf(org.holdfast.common.protocol.RestoreEnd.class);
                    return null;
                }
                for (int i = 0; i < d.count(); i++) {
                    long lbn = d.startLbn() + i;
                    d.block(i, codec, info.blockSize(), block);
                    if (d.codecs()[i] != PayloadCodec.ZERO) {
                        hasher.sha256(block, 0, block.length, digest, 0);
                        assertThat(digest).as("fingerprint of LBN %d", lbn).isEqualTo(Arrays.copyOfRange(d.fps(), i * 32, i * 32 + 32));
                    }
                    assertThat(block).as("restored LBN %d of %s@%d is the source's", lbn, volume, seq)
                            .isEqualTo(Arrays.copyOfRange(expected, (int) lbn * BS, (int) lbn * BS + BS));
                }
            }
        }
    }

    @Test
    void bitRot_verifyFindsAll_restoreRefuses_newBackupRepairs_survivesRestart() throws Exception {
        byte[] v1 = image(1, 300);
        byte[] v2 = v1.clone();
        for (int i = 0; i < 10; i++) {
            v2[(20 + i * 25) * BS + 7] ^= 0x5a;
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
            a.backup("a", v2, BS, false);
        }
        Set<Long> flipped = flipRecords(FLIPPED, 42);

        // verify finds 100 % of the damaged blocks, and nothing else
        Verifier.Report r = verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE);
        assertThat(badPbns(harness.store().badBlocks())).as("bad blocks after verify").isEqualTo(flipped);
        assertThat(r.badBlocks()).isEqualTo(FLIPPED);
        assertThat(r.newlyBad()).isEqualTo(FLIPPED);
        assertThat(r.blocksReferenced()).isEqualTo(600);
        assertThat(r.blocksRead()).as("each block shared by a@1 and a@2 is read once").isEqualTo(310);
        assertThat(r.damagedSnapshots()).isNotEmpty();
        DamageReport.VolumeDamage va = damage().volume(harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("a")));
        assertThat(va.damaged()).isTrue();
        assertThat(va.affectedSnapshots()).extracting(DamageReport.AffectedSnapshot::snapshot).contains("a@1", "a@2");

        // restore never writes wrong bytes, and the error names the block, file, volume, snapshot and LBN
        try (AgentDriver a = harness.agent()) {
            a.hello();
            ErrorMessage e = restoreChecking(a, "a", 1, v1);
            assertThat(e).as("restore of a damaged snapshot fails").isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
            assertThat(e.message()).contains("pbn ", "log-", "volume a", "snapshot a@1", "LBN ");
        }

        // a backup of the healthy source into a new volume uploads the bad blocks again and repairs them in place
        Committed b;
        try (AgentDriver a = harness.agent()) {
            a.hello();
            b = a.backup("b", v1, BS, true);
        }
        assertThat(b.sentBlocks()).as("the damaged blocks are uploaded again, %s", b).isGreaterThanOrEqualTo(FLIPPED - 10);
        assertThat(harness.store().badBlocks().count()).as("bad blocks left after the repairing backup").isLessThanOrEqualTo(10);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("b", v2, BS, false); // covers the blocks only v2 has
        }
        assertThat(harness.store().badBlocks().isEmpty()).as("every bad block repaired: %s", harness.store().badBlocks().all()).isTrue();

        assertAllRestore(v1, v2);
        Verifier.Report clean = verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE);
        assertThat(clean.badBlocks()).as("verify after the repair").isZero();
        assertThat(damage().damagedVolumes()).isEmpty();

        // the repaired locations are durable
        harness.restart();
        assertThat(harness.store().badBlocks().isEmpty()).isTrue();
        assertAllRestore(v1, v2);
        assertThat(verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE).badBlocks()).isZero();
    }

    private void assertAllRestore(byte[] v1, byte[] v2) {
        try (AgentDriver a = harness.agent()) {
            a.hello();
            assertThat(restoreChecking(a, "a", 1, v1)).as("a@1 restores").isNull();
            assertThat(restoreChecking(a, "a", 2, v2)).as("a@2 restores").isNull();
            assertThat(restoreChecking(a, "b", 1, v1)).as("b@1 restores").isNull();
            assertThat(restoreChecking(a, "b", 2, v2)).as("b@2 restores").isNull();
        }
    }

    @Test
    void bitRot_nextIncrementalOfSameVolume_repairsParentBlocks() throws Exception {
        byte[] v1 = image(3, 120);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        Set<Long> flipped = flipRecords(5, 9);
        verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE);
        assertThat(badPbns(harness.store().badBlocks())).isEqualTo(flipped);
        Committed c;
        try (AgentDriver a = harness.agent()) {
            a.hello();
            c = a.backup("a", v1, BS, true); // unchanged source: only the bad blocks are asked for
            assertThat(c.sentBlocks()).as("only the damaged blocks are uploaded, %s", c).isEqualTo(5);
            assertThat(restoreChecking(a, "a", 1, v1)).as("a@1 healed").isNull();
            assertThat(restoreChecking(a, "a", 2, v1)).isNull();
        }
        assertThat(harness.store().badBlocks().isEmpty()).isTrue();
    }

    /** An incremental backup as the agent makes it: begins from {@code base}, sends every LBN only if the server answers full. */
    private static Committed incremental(AgentDriver a, String volume, byte[] image, long base, BackupMode expected) {
        BackupReady ready = a.begin(volume, BS, image.length, base);
        assertThat(ready.mode()).as("mode the server answers for base %s@%d", volume, base).isEqualTo(expected);
        assertThat(ready.parentSequence()).isEqualTo(base);
        if (ready.mode() == BackupMode.FULL) {
            a.sendEntriesAndBlocks(image, BS, 0, image.length / BS, true, null);
        } // else: the source did not change since the base, so there is no changed LBN to send
        a.send(new org.holdfast.common.protocol.Commit(image.length));
        Committed c = a.expect(Committed.class);
        assertThat(c.sequence()).isEqualTo(base + 1);
        return c;
    }

    /**
     * A data log lost with its disk (the drill: a catalog restored on a new disk without the log being
     * written at the backup): verify used to read its blocks as neither sound nor bad, so the volume was
     * never flagged and every incremental on top inherited the hole. Now they are marked bad, and the
     * next backup is turned full and repairs them.
     */
    @Test
    void missingDataLog_verifyMarksItsBlocks_nextIncrementalIsTurnedFull_andRepairs() throws Exception {
        byte[] v1 = image(73, 900);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        Set<Long> inLogOne = new TreeSet<>();
        harness.store().locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
            if (logId == 1) {
                inLogOne.add(pbn);
            }
            return true;
        });
        assertThat(harness.store().stats().activeLogId()).as("1 MiB logs rolled").isGreaterThan(1);
        assertThat(inLogOne).isNotEmpty();
        harness.restartWithoutLogs(List.of(1));

        verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE);
        assertThat(badPbns(harness.store().badBlocks())).as("blocks of the missing log").isEqualTo(inLogOne);
        var volume = harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("a"));
        assertThat(damage().referencedBy(volume, 1)).isEqualTo(inLogOne.size());

        Committed repaired;
        try (AgentDriver a = harness.agent()) {
            a.hello();
            repaired = incremental(a, "a", v1, 1, BackupMode.FULL);
        }
        assertThat(repaired.sentBlocks()).as("only the lost blocks are uploaded, %s", repaired).isEqualTo(inLogOne.size());
        assertThat(harness.store().badBlocks().isEmpty()).as("left: %s", harness.store().badBlocks().all()).isTrue();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            for (long seq = 1; seq <= 2; seq++) {
                assertThat(restoreChecking(a, "a", seq, v1)).as("a@%d restores", seq).isNull();
            }
        }
    }

    /**
     * A restore that meets a block whose data log is missing: the agent gets CORRUPT_DATA naming the
     * block, snapshot and what to do, and every block of the log is marked bad at once (the read used
     * to mark only the block it met, so each restore found the next hole), in one sweep: a second
     * restore meeting the log does not scan again. Every snapshot using the log is flagged (the other
     * volume's too), no block of another log is marked, and one backup of "a" is turned full and
     * repairs all of its lost blocks, after which both snapshots restore byte-identical.
     */
    @Test
    void missingDataLog_restoreFailsWithCorruptData_marksEveryBlockOfTheLog_flagsItsSnapshots_oneBackupRepairs() throws Exception {
        byte[] filler = new byte[250 * BS];
        new Random(5).nextBytes(filler); // incompressible: fills most of the 1 MiB log 1, so it holds only a few blocks of "a"
        byte[] v1 = image(74, 200);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("filler", filler, BS, true);
            a.backup("a", v1, BS, true);
        }
        Set<Long> inLogOne = new TreeSet<>();
        harness.store().locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
            if (logId == 1) {
                inLogOne.add(pbn);
            }
            return true;
        });
        var volume = harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("a"));
        var fillerVolume = harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("filler"));
        Set<Long> lostOfA = mappedIn(volume, 1, v1.length / BS, inLogOne);
        Set<Long> lostOfFiller = mappedIn(fillerVolume, 1, filler.length / BS, inLogOne);
        assertThat(lostOfA).as("log 1 holds a few blocks of a").isNotEmpty().hasSizeLessThan(30);
        assertThat(lostOfFiller).as("and blocks of filler").isNotEmpty();
        harness.restartWithoutLogs(List.of(1));

        for (int attempt = 1; attempt <= 2; attempt++) {
            ErrorMessage e;
            try (AgentDriver a = harness.agent()) {
                a.hello();
                e = restoreChecking(a, "a", 1, v1);
            }
            assertThat(e).as("restore %d fails", attempt).isNotNull();
            assertThat(e.code()).as(e.message()).isEqualTo(ErrorCode.CORRUPT_DATA);
            assertThat(e.message()).contains("data log is missing", "log-00000001.hfl", "pbn ", "snapshot a@1", "LBN ",
                    "marked bad", "next backup");
            assertThat(badPbns(harness.store().badBlocks())).as("every block of log 1, none of another log").isEqualTo(inLogOne);
            assertThat(harness.store().missingLogsSwept()).as("log 1 swept once").isEqualTo(1);
            assertThat(damage().referencedBy(volume, 1)).as("a@1 flagged with all its lost blocks").isEqualTo(lostOfA.size());
            assertThat(damage().referencedBy(fillerVolume, 1)).as("filler@1 flagged, not restored").isEqualTo(lostOfFiller.size());
        }

        Committed repaired;
        try (AgentDriver a = harness.agent()) {
            a.hello();
            repaired = incremental(a, "a", v1, 1, BackupMode.FULL);
        }
        assertThat(repaired.sentBlocks()).as("all lost blocks of a uploaded again in one backup, %s", repaired).isEqualTo(lostOfA.size());
        Set<Long> stillBad = new TreeSet<>(inLogOne);
        stillBad.removeAll(lostOfA);
        assertThat(badPbns(harness.store().badBlocks())).as("only filler's blocks are left").isEqualTo(stillBad);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            for (long seq = 1; seq <= 2; seq++) {
                assertThat(restoreChecking(a, "a", seq, v1)).as("a@%d restores", seq).isNull();
            }
        }
    }

    /** The PBNs of {@code inLog} that snapshot {@code seq} of volume {@code v} maps in its first {@code blocks} LBNs. */
    private Set<Long> mappedIn(org.holdfast.server.catalog.VolumeRecord v, long seq, long blocks, Set<Long> inLog) {
        Set<Long> out = new TreeSet<>();
        try (var c = harness.catalog().mapCursor(v.internalId())) {
            c.startScan(seq, 0, blocks);
            while (c.nextMapped()) {
                if (inLog.contains(c.pbn())) {
                    out.add(c.pbn());
                }
            }
        }
        return out;
    }

    @Test
    void bitRot_nextIncrementalBackup_isTurnedFull_andRepairsTheParent() throws Exception {
        byte[] v1 = image(71, 120);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
            // no bad block: an incremental stays incremental
            assertThat(incremental(a, "a", v1, 1, BackupMode.INCREMENTAL).sentBlocks()).isZero();
        }
        Set<Long> flipped = flipRecords(5, 13);
        // only a@1 is verified: a@2, which carried the blocks over unchanged, has no result of its own
        verifier(Duration.ZERO).run(new VerifyScope("a", 1L), JobContext.NONE);
        assertThat(badPbns(harness.store().badBlocks())).isEqualTo(flipped);
        var volume = harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("a"));
        assertThat(damage().referencedBy(volume, 2)).as("bad blocks a@2 references").isEqualTo(5);

        Committed repaired;
        try (AgentDriver a = harness.agent()) {
            a.hello();
            repaired = incremental(a, "a", v1, 2, BackupMode.FULL);
        }
        assertThat(repaired.sentBlocks()).as("only the damaged blocks are uploaded, %s", repaired).isEqualTo(5);
        assertThat(harness.store().badBlocks().isEmpty()).as("left: %s", harness.store().badBlocks().all()).isTrue();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            for (long seq = 1; seq <= 3; seq++) {
                assertThat(restoreChecking(a, "a", seq, v1)).as("a@%d restores", seq).isNull();
            }
        }
        // the new snapshot references the blocks repaired in place, not copies of them
        try (var c = harness.catalog().mapCursor(volume.internalId())) {
            for (long lbn = 0; lbn < 120; lbn++) {
                c.seekAtOrBefore(lbn, 1);
                long old = c.pbn();
                c.seekAtOrBefore(lbn, 3);
                assertThat(c.pbn()).as("PBN of LBN %d in a@3 and a@1", lbn).isEqualTo(old);
            }
        }
        assertThat(verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE).badBlocks()).isZero();
        assertThat(damage().damagedVolumes()).isEmpty();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            assertThat(incremental(a, "a", v1, 3, BackupMode.INCREMENTAL).sentBlocks()).as("repaired: incremental again").isZero();
        }
    }

    @Test
    void restoreFindsDamage_nextIncrementalBackup_isTurnedFull() throws Exception {
        byte[] v1 = image(73, 60);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        flipRecords(1, 17);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            assertThat(restoreChecking(a, "a", 1, v1)).as("the restore meets the damage").isNotNull();
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            assertThat(incremental(a, "a", v1, 1, BackupMode.FULL).sentBlocks()).isEqualTo(1);
            assertThat(restoreChecking(a, "a", 1, v1)).as("a@1 healed").isNull();
            assertThat(restoreChecking(a, "a", 2, v1)).isNull();
        }
        assertThat(harness.store().badBlocks().isEmpty()).isTrue();
    }

    @Test
    void verify_incrementalWindow_skipsBlocksFoundSoundRecently() throws Exception {
        byte[] v1 = image(5, 80);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
            a.backup("b", v1, BS, true); // same blocks, second volume
        }
        Verifier.Report first = verifier(Duration.ofDays(1)).run(VerifyScope.all(), JobContext.NONE);
        assertThat(first.blocksReferenced()).isEqualTo(2 * first.blocksRead());
        assertThat(first.blocksRead()).as("a block shared by two snapshots is read once").isEqualTo(80);
        Verifier.Report second = verifier(Duration.ofDays(1)).run(VerifyScope.all(), JobContext.NONE);
        assertThat(second.blocksRead()).as("all found sound within the window").isZero();
        assertThat(second.blocksSkippedRecent()).isEqualTo(80);
        Verifier.Report full = verifier(Duration.ZERO).run(new VerifyScope("a", 1L), JobContext.NONE);
        assertThat(full.blocksRead()).isEqualTo(80);
    }

    @Test
    void verify_full_readsBlocksTheWindowSkips_andFindsFreshRot() throws Exception {
        byte[] v1 = image(75, 50);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        assertThat(verifier(Duration.ofDays(30)).run(VerifyScope.all(), JobContext.NONE).blocksRead()).isEqualTo(50);
        Set<Long> flipped = flipRecords(2, 19);
        Verifier.Report windowed = verifier(Duration.ofDays(30)).run(VerifyScope.all(), JobContext.NONE);
        assertThat(windowed.blocksSkippedRecent()).as("all found sound within the window").isEqualTo(50);
        assertThat(windowed.badBlocks()).as("the windowed pass misses the fresh rot").isZero();
        Verifier.Report full = verifier(Duration.ofDays(30)).run(VerifyScope.all(), true, JobContext.NONE);
        assertThat(full.blocksRead()).isEqualTo(50);
        assertThat(full.blocksSkippedRecent()).isZero();
        assertThat(full.newlyBad()).isEqualTo(2);
        assertThat(badPbns(harness.store().badBlocks())).isEqualTo(flipped);
    }

    @Test
    void verify_cancelled_stopsBetweenSnapshots_keepingFinishedResults() throws Exception {
        byte[] v1 = image(7, 30);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
            a.backup("b", image(8, 30), BS, true);
        }
        java.util.concurrent.atomic.AtomicLong advanced = new java.util.concurrent.atomic.AtomicLong();
        JobContext cancelAfterFirst = new JobContext() {
            @Override
            public void total(long items, long bytes) {
                assertThat(items).as("one item per snapshot").isEqualTo(2);
            }

            @Override
            public void advance(long items, long bytes) {
                advanced.addAndGet(items);
            }

            @Override
            public void log(String line) {
            }

            @Override
            public boolean cancelRequested() {
                return advanced.get() >= 1;
            }
        };
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> verifier(Duration.ZERO).run(VerifyScope.all(), cancelAfterFirst))
                .isInstanceOf(org.holdfast.server.jobs.JobCancelledException.class);
        VerifyLedger ledger = new VerifyLedger(harness.db());
        long a = harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("a")).internalId();
        long b = harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("b")).internalId();
        assertThat(ledger.snapshot(a, 1)).as("the finished snapshot keeps its result").isPresent();
        assertThat(ledger.snapshot(a, 1).get().damagedCount()).isZero();
        assertThat(ledger.snapshot(b, 1)).as("the cancelled pass did not reach b@1").isEmpty();
    }

    @Test
    void verify_rateLimit_pacesReads() throws Exception {
        byte[] random = new byte[160 * BS];
        new Random(21).nextBytes(random); // incompressible: 640 KiB stored, read in chunks of 256, 256 and 128 KiB
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", random, BS, false);
        }
        Verifier limited = new Verifier(harness.catalog(), harness.store(), new VerifyLedger(harness.db()),
                new VerifySettings(2, 128 << 10, Duration.ZERO, null), Clock.systemUTC());
        long t0 = System.nanoTime();
        Verifier.Report r = limited.run(VerifyScope.all(), JobContext.NONE);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(r.bytesRead()).isEqualTo(160L * BS);
        // at 128 KiB/s only the last chunk to ask goes unpaid: at least (640 - 256) KiB / 128 KiB/s = 3 s
        assertThat(ms).as("a pass limited to 128 KiB/s over 640 KiB").isGreaterThanOrEqualTo(2500);
    }

    @Test
    void bitRot_sungemEngine_backupRepairsEveryBadBlock() throws Exception {
        harness.close();
        harness = IngestHarness.withIndex(dir.resolve("sungem-run"), (db, d) -> new org.holdfast.server.engine.SungemFingerprintIndex(
                d.resolve("sungem"), org.holdfast.server.engine.SungemSettings.defaults().withContainerCacheBytes(8L << 20)
                        .withSfiBytes(1L << 20).withBloom(Duration.ofDays(1), 3, 100_000, 0.01), Clock.systemUTC()));
        dir = dir.resolve("sungem-run");
        byte[] v1 = image(31, 200);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        Set<Long> flipped = flipRecords(12, 5);
        verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE);
        assertThat(badPbns(harness.store().badBlocks())).isEqualTo(flipped);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("b", v1, BS, true); // a new volume: the engine (or the registry) names the bad blocks as repair targets
            assertThat(harness.store().badBlocks().isEmpty()).as("left: %s", harness.store().badBlocks().all()).isTrue();
            assertThat(restoreChecking(a, "a", 1, v1)).as("a@1 healed").isNull();
            assertThat(restoreChecking(a, "b", 1, v1)).isNull();
        }
        assertThat(verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE).badBlocks()).isZero();
    }

    @Test
    void restore_damagedBlock_marksItAndFlagsTheVolumeWithoutAVerify() throws Exception {
        byte[] v1 = image(41, 60);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        Set<Long> flipped = flipRecords(1, 3);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            ErrorMessage e = restoreChecking(a, "a", 1, v1);
            assertThat(e).isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
            assertThat(e.message()).contains("pbn " + flipped.iterator().next());
        }
        assertThat(badPbns(harness.store().badBlocks())).as("the restore marked the block bad").isEqualTo(flipped);
        var volume = harness.catalog().requireVolume(new org.holdfast.common.id.VolumeId("a"));
        DamageReport.VolumeDamage d = damage().volume(volume);
        assertThat(d.damaged()).isTrue();
        assertThat(d.affectedSnapshots()).singleElement().satisfies(s -> {
            assertThat(s.snapshot()).isEqualTo("a@1");
            assertThat(s.damagedBlocks()).singleElement().satisfies(b -> assertThat(b.pbn()).isEqualTo(flipped.iterator().next()));
        });
        DamageReport.SnapshotVerification sv = damage().snapshot(volume, harness.catalog().requireSnapshot(volume.name(), 1));
        assertThat(sv.status()).isEqualTo("damaged");
        assertThat(sv.lastVerified()).as("no verify ran").isNull();
    }

    @Test
    void verifyJobs_schedule_runsPassesAsJobsOfTheirOwnLane() throws Exception {
        byte[] v1 = image(51, 20);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        org.holdfast.server.jobs.Jobs jobs = new org.holdfast.server.jobs.Jobs(org.holdfast.server.jobs.JobHistory.NONE, Clock.systemUTC());
        Verifier scheduled = new Verifier(harness.catalog(), harness.store(), new VerifyLedger(harness.db()),
                new VerifySettings(1, 0, Duration.ZERO, Duration.ofMillis(200)), Clock.systemUTC());
        java.util.concurrent.CountDownLatch gcBusy = new java.util.concurrent.CountDownLatch(1);
        // a long GC job holds its lane: verify passes must not wait behind it
        jobs.submit("gc-cycle", "gc", "test", job -> {
            gcBusy.await();
            return java.util.Map.of();
        });
        try (org.holdfast.server.verify.VerifyJobs vj = new org.holdfast.server.verify.VerifyJobs(scheduled, jobs)) {
            vj.startSchedule();
            long deadline = System.currentTimeMillis() + 30_000;
            while (vj.runsTotal() < 2 && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            assertThat(vj.runsTotal()).as("scheduled passes ran").isGreaterThanOrEqualTo(2);
            var page = jobs.list(new org.holdfast.server.jobs.Jobs.Query(org.holdfast.server.verify.VerifyJobs.KIND, null, null, 10));
            assertThat(page.jobs()).isNotEmpty().allSatisfy(j -> assertThat(j.submittedBy()).isEqualTo("schedule"));
            assertThat(vj.lastReport().blocksRead()).isEqualTo(20);
        } finally {
            gcBusy.countDown();
            jobs.close();
        }
    }

    @Test
    void upload_bytesNotMatchingTheBadBlock_repairsNothing() throws Exception {
        byte[] v1 = image(61, 40);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("a", v1, BS, true);
        }
        Set<Long> flipped = flipRecords(3, 8);
        verifier(Duration.ZERO).run(VerifyScope.all(), JobContext.NONE);
        assertThat(badPbns(harness.store().badBlocks())).isEqualTo(flipped);
        // an agent claims the bad blocks' fingerprints but sends other bytes for the first one asked
        byte[] other = new byte[BS];
        new Random(99).nextBytes(other);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("b", BS, v1.length, 0);
            try {
                a.sendEntriesAndBlocks(v1, BS, 0, v1.length / BS, true, other);
            } catch (AssertionError expectedWhenTheServerCloses) {
                // the driver may see the ERROR where it expected a NEED
            }
            Object o;
            do {
                o = a.next();
            } while (!(o instanceof ErrorMessage) && !"closed".equals(o));
            if (o instanceof ErrorMessage e) {
                assertThat(e.code()).isEqualTo(ErrorCode.FINGERPRINT_MISMATCH);
            }
        }
        assertThat(badPbns(harness.store().badBlocks())).as("nothing repaired by a lying upload").isEqualTo(flipped);
        harness.restart();
        assertThat(badPbns(harness.store().badBlocks())).isEqualTo(flipped);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            ErrorMessage e = restoreChecking(a, "a", 1, v1);
            assertThat(e).as("a@1 is still damaged, and says so").isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
        }
    }
}
