package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobHistory;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.OfflineVerifyRequest;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.Verifier;
import org.holdfast.server.verify.VerifyJobs;
import org.holdfast.server.verify.VerifySettings;
import org.holdfast.server.store.StoreException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The offline checker writes nothing in the data directory it checks: every file has the same
 * checksum before and after a run, with a torn tail past the durable point in the active data log
 * (which a server start would truncate), and a damaged block is still reported as data loss. The
 * one exception: corrupt blocks leave a verify request, which the next server start runs.
 */
class FsckReadOnlyTest {
    private static final int BS = 4096;
    private static final VolumeId VOL = new VolumeId("vol");

    @TempDir
    Path dir;
    @TempDir
    Path scratch;

    @Test
    void run_rangeStoreAt2To40_checkerAdoptsTheRecordedRange_cleanThenDamageReported() throws Exception {
        PbnRange range = new PbnRange(1L << 40, (1L << 40) + (1L << 30));
        assertThat(backUpOneVolume(range)).isEqualTo(range.first());
        Map<String, String> before = checksums(dir);
        assertThat(FsckTool.run(dir, scratch)).as("clean").isZero();
        assertThat(checksums(dir)).isEqualTo(before);
        flipFirstRecord(dir.resolve("data").resolve(DataLog.fileName(1)));
        assertThat(FsckTool.run(dir, scratch)).as("data loss").isEqualTo(2);
    }

    @Test
    void run_tornTailAndThenFlippedByte_checksumsOfEveryFileUnchangedAndDamageReported() throws Exception {
        backUpOneVolume();
        Path log = dir.resolve("data").resolve(DataLog.fileName(1));
        long durable = Files.size(log);
        Files.write(log, new byte[1000], StandardOpenOption.APPEND); // a torn tail past the durable point

        Map<String, String> before = checksums(dir);
        assertThat(FsckTool.run(dir, scratch)).as("clean").isZero();
        assertThat(checksums(dir)).as("no file of the data directory changed, none appeared or vanished").isEqualTo(before);
        assertThat(Files.size(log)).as("the torn tail is left for the server's start").isEqualTo(durable + 1000);
        try (Stream<Path> s = Files.list(scratch)) {
            assertThat(s.toList()).as("the scratch copy is deleted").isEmpty();
        }

        // flip one byte inside the first record's payload: the checker reports data loss, and writes only its verify request
        flipFirstRecord(log);
        Map<String, String> damaged = checksums(dir);
        assertThat(FsckTool.run(dir, scratch)).as("data loss").isEqualTo(2);
        Map<String, String> after = checksums(dir);
        assertThat(after.remove(OfflineVerifyRequest.FILE)).as("the verify request").isNotNull();
        assertThat(after).isEqualTo(damaged);
    }

    @Test
    void run_corruptBlock_leavesAVerifyRequest_whichTheNextServerStartRuns_flaggingTheSnapshot() throws Exception {
        long firstPbn = backUpOneVolume();
        flipFirstRecord(dir.resolve("data").resolve(DataLog.fileName(1)));
        String text = fsckExpecting(2);
        assertThat(text).contains("verify pass requested: the server runs it at its next start");
        OfflineVerifyRequest asked = OfflineVerifyRequest.read(dir);
        assertThat(asked.pbns()).containsExactly(firstPbn);

        // the next start, as the server wires it: the block is marked bad, the pass finds the snapshot that uses it
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h);
             Jobs jobs = new Jobs(JobHistory.NONE, Clock.systemUTC())) {
            assertThat(f.store.badBlocks().isBad(firstPbn)).as("only the scratch copy knew").isFalse();
            VerifyLedger ledger = new VerifyLedger(f.db);
            VerifyJobs verify = new VerifyJobs(new Verifier(f.catalog, f.store, ledger,
                    new VerifySettings(1, 0, Duration.ofDays(30), null), Clock.systemUTC()), jobs);
            Job queued = verify.passRequestedOffline(dd.root());
            assertThat(queued).isNotNull();
            assertThat(jobs.await(queued.id(), Duration.ofSeconds(60)).state()).isEqualTo(JobState.SUCCEEDED);
            assertThat(f.store.badBlocks().isBad(firstPbn)).isTrue();
            assertThat(verify.lastReport().damagedSnapshots()).as("the volume is flagged, so its next backup repairs").hasSize(1);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (Files.exists(OfflineVerifyRequest.file(dir)) && System.nanoTime() < deadline) {
                Thread.sleep(20); // removed by the job's end listener
            }
            assertThat(OfflineVerifyRequest.file(dir)).as("done: a later start runs nothing").doesNotExist();
            assertThat(verify.passRequestedOffline(dd.root())).isNull();
        }
    }

    @Test
    void run_corruptBlock_requestCannotBeWritten_stillDataLoss_sayingToRunAFullPass() throws Exception {
        backUpOneVolume();
        flipFirstRecord(dir.resolve("data").resolve(DataLog.fileName(1)));
        Files.createDirectories(OfflineVerifyRequest.file(dir).resolve("in-the-way")); // as a read-only or odd data directory refuses it
        String text = fsckExpecting(2);
        assertThat(text).contains("verify pass NOT requested").contains("full verify pass");
    }

    @Test
    void passRequestedOffline_staleRequestNamingASoundBlock_marksNothing_aCorruptOneFoundSoundRecentlyIsReadAndMarked() throws Exception {
        long firstPbn = backUpOneVolume();
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h);
             Jobs jobs = new Jobs(JobHistory.NONE, Clock.systemUTC())) {
            VerifyJobs verify = new VerifyJobs(new Verifier(f.catalog, f.store, new VerifyLedger(f.db),
                    new VerifySettings(1, 0, Duration.ofDays(30), null), Clock.systemUTC()), jobs);
            // a request left from before a repair in place, or copied along from another data directory
            OfflineVerifyRequest.write(dd.root(), "fsck", new long[] {firstPbn, firstPbn + 1}, 1000L);
            Job stale = verify.passRequestedOffline(dd.root());
            assertThat(jobs.await(stale.id(), Duration.ofSeconds(60)).state()).isEqualTo(JobState.SUCCEEDED);
            assertThat(f.store.badBlocks().isBad(firstPbn)).as("this store reads the block sound").isFalse();
            assertThat(f.store.badBlocks().count()).isZero();
            assertThat(verify.lastReport().damagedSnapshots()).isEmpty();
        }
        // now the block rots after that pass found it sound (within the 30-day window): fsck's request makes the pass read it
        flipFirstRecord(dir.resolve("data").resolve(DataLog.fileName(1)));
        OfflineVerifyRequest.write(dir, "fsck", new long[] {firstPbn}, 2000L);
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h);
             Jobs jobs = new Jobs(JobHistory.NONE, Clock.systemUTC())) {
            VerifyJobs verify = new VerifyJobs(new Verifier(f.catalog, f.store, new VerifyLedger(f.db),
                    new VerifySettings(1, 0, Duration.ofDays(30), null), Clock.systemUTC()), jobs);
            Job queued = verify.passRequestedOffline(dd.root());
            assertThat(jobs.await(queued.id(), Duration.ofSeconds(60)).state()).isEqualTo(JobState.SUCCEEDED);
            assertThat(f.store.badBlocks().isBad(firstPbn)).isTrue();
            assertThat(verify.lastReport().damagedSnapshots()).hasSize(1);
        }
    }

    /** Runs fsck on the data directory, asserting its exit code; returns what it printed. */
    private String fsckExpecting(int expected) {
        java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        java.io.PrintStream stdout = System.out;
        int code;
        System.setOut(new java.io.PrintStream(printed, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            code = FsckTool.run(dir, scratch);
        } finally {
            System.setOut(stdout);
        }
        String text = printed.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(code).as(text).isEqualTo(expected);
        return text;
    }

    /** A volume with one 64-block snapshot in the data directory, as a server leaves it; returns the first block's PBN. */
    private long backUpOneVolume() throws Exception {
        return backUpOneVolume(PbnRange.STANDALONE);
    }

    /** Backs up one volume of 64 blocks into a store over {@code range}; answers the first PBN. */
    private long backUpOneVolume(PbnRange range) throws Exception {
        long first = -1;
        try (DataDirectory dd = DataDirectory.open(dir); // as a server leaves it: with its lock file
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h,
                     CommitParts.DEFAULT_PART_ENTRIES, null, ExactFingerprintIndex::new, range)) {
            SessionMap m = new SessionMap(64);
            Random r = new Random(7);
            for (int lbn = 0; lbn < 64; lbn++) {
                byte[] payload = new byte[BS];
                r.nextBytes(payload);
                long pbn = f.store.append(MessageDigest.getInstance("SHA-256").digest(payload), 0, payload, 0, BS,
                        FormatVersions.CODEC_RAW, BS);
                assertThat(f.gc.guard().protect(pbn)).isTrue();
                m.add(lbn, pbn);
                first = first < 0 ? pbn : first;
            }
            f.store.sync();
            f.commit.commit(new SnapshotCommit.Request(VOL, BS, 64L * BS, 0, m, 64L * BS, 64, 64, 64L * BS));
        }
        return first;
    }

    /** Flips one byte inside the first record's payload. */
    private static void flipFirstRecord(Path log) throws IOException {
        try (FileChannel ch = FileChannel.open(log, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long at = FormatVersions.DATA_LOG_HEADER_BYTES + FormatVersions.RECORD_HEADER_BYTES + 100;
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            ch.write(b, at);
        }
    }

    @Test
    void run_gmaChunkDamaged_refusedNamingTheDataDirectorysRebuildAndNothingWritten() throws Exception {
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h)) {
            assertThat(f.gc.fsck().clean()).isTrue();
        }
        Path gma = dir.resolve("gc").resolve("gma.dat");
        try (FileChannel ch = FileChannel.open(gma, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {(byte) 0xA5}), org.holdfast.gc.gma.GmaFormat.chunkOffset(0) + 64);
        }
        Map<String, String> before = checksums(dir);
        assertThatThrownBy(() -> FsckTool.run(dir, scratch)).hasMessageContaining("damaged GC metadata")
                .hasMessageContaining(dir.resolve("gc").resolve("gma.dat").toString())
                .hasMessageContaining("holdfast-server gc-rebuild --data-dir " + dir.toAbsolutePath().normalize())
                .hasMessageNotContaining(scratch.toString());
        assertThat(checksums(dir)).isEqualTo(before);
    }

    @Test
    void run_serverHoldsTheDirectory_refusedAndNothingWritten() throws Exception {
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h)) {
            Map<String, String> before = checksums(dir.resolve("data"));
            assertThatThrownBy(() -> FsckTool.run(dir, scratch)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("in use by a running Holdfast server");
            assertThat(checksums(dir.resolve("data"))).isEqualTo(before);
        }
    }

    private static Map<String, String> checksums(Path root) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                MessageDigest sha = MessageDigest.getInstance("SHA-256");
                out.put(root.relativize(p).toString(), HexFormat.of().formatHex(sha.digest(Files.readAllBytes(p))));
            }
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
        return out;
    }
}
