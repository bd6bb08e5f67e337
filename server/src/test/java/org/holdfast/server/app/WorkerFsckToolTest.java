package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.ingest.cluster.WorkerGcImport;
import org.holdfast.server.ingest.cluster.WorkerGcMetadata;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code worker-fsck} over a real stopped worker's data directory (range store and GC metadata on
 * disk, the GC metadata imported from the same counts file so they start equal): clean, a block
 * forgotten or flipped in the range store's log (data loss naming the PBN), GMA counts changed
 * behind the log (bookkeeping errors, the dangerous side named), marks differing either way (the
 * advice, no RC comparison, the data still checked), GC metadata marked counts-lost (bookkeeping
 * errors, the rebuild named), a worker that logged every delta routed to it
 * while the master's later operations routed it nothing (compared by a version 2 file's routed
 * mark, skipped by version 1's equal-marks rule), a worker behind the routed mark (not compared,
 * the advice), a running worker and bad files refused, and nothing in the data directory changed
 * by any run.
 */
class WorkerFsckToolTest {
    private static final PbnRange RANGE = new PbnRange(1L << 48, (1L << 48) + (1L << 40));
    private static final long FIRST = RANGE.first();
    private static final int STORED = 20;
    private static final int REFERENCED = 10;
    private static final long MARK = GcDelta.deltaId(5, GcDelta.MAX_PART);
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-06-01T00:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path dir;
    private Path dataDir;
    private Path rangeData;
    private Path file;

    @BeforeEach
    void workerWithImportedCounts() throws Exception {
        dataDir = dir.resolve("worker");
        rangeData = dataDir.resolve("range-data");
        Files.createDirectories(dataDir.resolve("catalog")); // the worker's own catalog; the check reads only range-data
        try (MetadataDb db = MetadataDb.open(rangeData.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(rangeData.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0,
                     RANGE), db)) {
            Random r = new Random(11);
            for (int i = 0; i < STORED; i++) {
                byte[] b = new byte[4096];
                r.nextBytes(b);
                store.append(MessageDigest.getInstance("SHA-256").digest(b), 0, b, 0, b.length, FormatVersions.CODEC_RAW, b.length);
            }
            store.sync();
        }
        file = countsFile("w1.counts", MARK, 0);
        new WorkerGcImport(rangeData, Duration.ofHours(2), CLOCK, line -> { }).run(file);
    }

    /** Records of the first REFERENCED stored PBNs (RC 1 or 2, pins on one), FIRST+12 dereferenced; {@code rcExtra} added to FIRST's RC. */
    private Path countsFile(String name, long mark, int rcExtra) {
        Path f = dir.resolve(name);
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(f, new WorkerCountsFile.Header(1, RANGE, mark, CLOCK.millis()))) {
            for (int i = 0; i < REFERENCED; i++) {
                w.add(FIRST + i, 1 + i % 2 + (i == 0 ? rcExtra : 0), i == 3 ? 2 : 0, 0);
            }
            w.add(FIRST + 12, 0, 0, CLOCK.millis() + 1000);
            w.finish();
        }
        return f;
    }

    /** As {@link #countsFile} in version 2 with the master's routed mark and outbox entries for the worker. */
    private Path countsFile(String name, long mark, int rcExtra, long routed, long outboxEntries) {
        Path f = dir.resolve(name);
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(f, new WorkerCountsFile.Header(1, RANGE, mark, CLOCK.millis(), routed,
                outboxEntries))) {
            for (int i = 0; i < REFERENCED; i++) {
                w.add(FIRST + i, 1 + i % 2 + (i == 0 ? rcExtra : 0), i == 3 ? 2 : 0, 0);
            }
            w.add(FIRST + 12, 0, 0, CLOCK.millis() + 1000);
            w.finish();
        }
        return f;
    }

    /** The records of {@link #countsFile} as a version 1 file (no routed mark), as the release before wrote it. */
    private Path v1CountsFile(String name, long mark, int rcExtra) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(WorkerCountsFile.HEADER_BYTES_V1 + 11 * WorkerCountsFile.RECORD_BYTES + 8);
        b.put(WorkerCountsFile.MAGIC).putInt(1).putLong(1).putLong(RANGE.first()).putLong(RANGE.limit()).putLong(mark)
                .putLong(CLOCK.millis());
        for (int i = 0; i < REFERENCED; i++) {
            b.putLong(FIRST + i).putInt(1 + i % 2 + (i == 0 ? rcExtra : 0)).putInt(i == 3 ? 2 : 0).putLong(0);
        }
        b.putLong(FIRST + 12).putInt(0).putInt(0).putLong(CLOCK.millis() + 1000).putLong(11);
        byte[] body = b.array();
        byte[] sum = MessageDigest.getInstance("SHA-256").digest(body);
        Path f = dir.resolve(name);
        Files.write(f, body);
        Files.write(f, sum, StandardOpenOption.APPEND);
        assertThat(WorkerCountsFile.verify(f).routedMarkKnown()).isFalse();
        return f;
    }

    /** The worker logs delta (6, 0), +1 on FIRST: the last delta the master routes to it (its operations 7 to 9 route it nothing). */
    private void workerLogsOperation6() {
        try (WorkerGcMetadata m = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            m.log(new GcDelta(6, 0, 1, new byte[] {1}, new long[] {FIRST}, new long[] {1}), RANGE);
        }
    }

    private WorkerFsckRuns.Run fsck(String... more) {
        return WorkerFsckRuns.run(Stream.concat(Stream.of("--data-dir", dataDir.toString(), "--scratch-dir", dir.toString()),
                Stream.of(more)).toArray(String[]::new));
    }

    private List<String> listing() throws Exception {
        return WorkerFsckRuns.listing(dataDir);
    }

    private List<String> scratchLeft() throws Exception {
        return WorkerFsckRuns.scratchLeft(dir);
    }

    @Test
    void run_importedCountsIntactStore_cleanLeaksCountedNothingChanged() throws Exception {
        List<String> before = listing();
        Thread.sleep(20); // a write during the run would show as a later mtime

        WorkerFsckRuns.Run r = fsck("--counts", file.toString());

        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("worker-fsck: worker 1", REFERENCED + " referenced blocks", STORED + " stored blocks",
                "GC delta marks: file " + MARK + ", worker " + MARK + ", routed unknown (equal: counts compared)",
                "missing blocks (DATA LOSS): 0", "corrupt blocks (DATA LOSS): 0", "RC below the catalog's (DANGEROUS",
                "unreferenced stored blocks (leak, not an error): " + (STORED - REFERENCED), "result: clean");
        assertThat(r.err()).contains("ETA", "read " + REFERENCED + "/" + REFERENCED + " referenced blocks");
        assertThat(listing()).as("nothing in the data directory changed").isEqualTo(before);
        assertThat(scratchLeft()).as("the scratch copy is deleted").isEmpty();

        WorkerFsckRuns.Run json = fsck("--counts", file.toString(), "--json");
        assertThat(json.code()).isZero();
        assertThat(json.out()).startsWith("{\"result\":\"clean\",\"exitCode\":0,\"workerId\":1").contains("\"marks\":\"equal\"",
                "\"blocksRead\":" + REFERENCED, "\"leaks\":{\"count\":" + (STORED - REFERENCED));
    }

    @Test
    void run_blockForgottenAndBlockFlippedInRangeLog_dataLossNamingEachPbnNothingChanged() throws Exception {
        long[] at = new long[2];
        try (MetadataDb db = MetadataDb.open(rangeData.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(rangeData.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0,
                     RANGE), db)) {
            store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                if (pbn == FIRST + 4) {
                    at[0] = logId;
                    at[1] = offset;
                }
                return true;
            });
            store.forget(new long[] {FIRST + 7}, 1);
        }
        try (FileChannel ch = FileChannel.open(rangeData.resolve("data").resolve(DataLog.fileName((int) at[0])), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            long pos = at[1] + FormatVersions.RECORD_HEADER_BYTES + 100;
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, pos);
            b.put(0, (byte) (b.get(0) ^ 0x5a)).rewind();
            ch.write(b, pos);
        }
        List<String> before = listing();
        Thread.sleep(20);

        WorkerFsckRuns.Run r = fsck("--counts", file.toString());

        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.out()).contains("missing blocks (DATA LOSS): 1 e.g. PBN [" + (FIRST + 7) + "]",
                "corrupt blocks (DATA LOSS): 1 e.g. PBN [" + (FIRST + 4) + "]", "result: DATA LOSS");
        assertThat(listing()).as("the corrupt block is marked bad in the scratch copy only").isEqualTo(before);
        WorkerFsckRuns.Run json = fsck("--counts", file.toString(), "--json");
        assertThat(json.out()).contains("\"result\":\"data-loss\"", "\"missingBlocks\":{\"count\":1,\"samples\":[" + (FIRST + 7) + "]}");
    }

    @Test
    void run_gmaCountsChangedBehindTheLog_bookkeepingErrorsDangerousSideNamed() throws Exception {
        try (BoscPipeline p = BoscPipeline.open(rangeData.resolve("gc"), BoscSettings.defaults().withCommitters(1), RANGE)) {
            long ci = p.layout().chunkOf(FIRST);
            p.withCurrentChunk(ci, c -> {
                c.addRc(p.layout().slotOf(FIRST), -1); // 1 -> 0: a sweep could free it
                c.addRc(p.layout().slotOf(FIRST + 1), -1); // 2 -> 1
                c.addRc(p.layout().slotOf(FIRST + 15), 1); // unreferenced by the catalog
                c.addPins(p.layout().slotOf(FIRST + 3), -1);
            });
            p.syncGma();
        }

        WorkerFsckRuns.Run r = fsck("--counts", file.toString());

        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(r.out()).contains("RC below the catalog's (DANGEROUS: a sweep may free a referenced block): 2 e.g. PBN ["
                + FIRST + ", " + (FIRST + 1) + "]", "RC above the catalog's (leak side: kept past its last reference): 1 e.g. PBN ["
                + (FIRST + 15) + "]", "pin disagreements: 1 e.g. PBN [" + (FIRST + 3) + "]", "missing blocks (DATA LOSS): 0",
                "result: errors");
    }

    @Test
    void run_fileMarkAboveWorkers_startWorkerAdviceNoRcComparison() throws Exception {
        Path ahead = countsFile("ahead.counts", MARK + 1, 1); // the master counts a delta the worker has not logged yet

        WorkerFsckRuns.Run r = fsck("--counts", ahead.toString(), "--json");

        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(4);
        assertThat(r.out()).contains("\"result\":\"not-compared\"", "\"marks\":\"worker-behind\"", "\"rcBelow\":{\"count\":0",
                "\"rcAbove\":{\"count\":0", "\"routedMark\":null", "does not say which deltas the master routed",
                "so the master sends what waits", "\"blocksRead\":" + REFERENCED);
    }

    @Test
    void run_workerLoggedDeltaAfterExport_exportAgainAdviceDataStillChecked() throws Exception {
        try (WorkerGcMetadata m = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            m.log(new GcDelta(6, 0, 1, new byte[] {1}, new long[] {FIRST}, new long[] {1}), RANGE);
        }
        try (MetadataDb db = MetadataDb.open(rangeData.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(rangeData.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0,
                     RANGE), db)) {
            store.forget(new long[] {FIRST + 2}, 1);
        }

        WorkerFsckRuns.Run r = fsck("--counts", file.toString());

        assertThat(r.code()).as("data loss is found whatever the marks").isEqualTo(2);
        assertThat(r.out()).contains("(worker ahead of the file: counts NOT compared)", "the file is older than the worker's metadata",
                "export again (gc-rebuild --worker 1 --out FILE)", "missing blocks (DATA LOSS): 1 e.g. PBN [" + (FIRST + 2) + "]")
                .doesNotContain("RC below", "RC above");
    }

    @Test
    void run_workerWithoutGcMetadata_importAdviceDataStillChecked() throws Exception {
        org.springframework.util.FileSystemUtils.deleteRecursively(rangeData.resolve("gc"));

        WorkerFsckRuns.Run r = fsck("--counts", file.toString());

        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(4);
        assertThat(r.out()).contains("GC delta marks: file " + MARK + ", worker none, routed unknown (no GC metadata: counts NOT compared)",
                "import the file (worker-gc-import)", "read " + REFERENCED + " blocks", "result: counts not compared");
        assertThat(rangeData.resolve("gc")).as("not created by the check").doesNotExist();
    }

    @Test
    void run_gcMetadataMarkedCountsLost_bookkeepingExit1SayingHowToRebuild() throws Exception {
        // as WorkerGcMetadata marks it (GC metadata created anew over a store with blocks); the counts imported above are equal
        Files.writeString(rangeData.resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST), "counts lost\n", StandardCharsets.UTF_8);
        List<String> before = listing();
        Thread.sleep(20);

        WorkerFsckRuns.Run r = fsck("--counts", file.toString());

        assertThat(r.code()).as("counts known lost are never clean: " + r.out() + r.err()).isEqualTo(1);
        assertThat(r.out()).contains("GC metadata marked counts-lost (BOOKKEEPING", "every sweep of this worker is refused",
                "gc-rebuild --worker 1 --out FILE", "worker-gc-import --data-dir", "Rebuilding a worker's lost GC metadata",
                "missing blocks (DATA LOSS): 0", "result: errors");
        assertThat(listing()).as("nothing in the data directory changed").isEqualTo(before);
        WorkerFsckRuns.Run json = fsck("--counts", file.toString(), "--json");
        assertThat(json.code()).isEqualTo(1);
        assertThat(json.out()).startsWith("{\"result\":\"errors\",\"exitCode\":1,").contains("\"countsLost\":true");
    }

    @Test
    void run_gcMetadataOfAnotherRange_couldNotRunNamingTheRealDirectory() throws Exception {
        org.springframework.util.FileSystemUtils.deleteRecursively(rangeData.resolve("gc"));
        try (BoscPipeline p = BoscPipeline.open(rangeData.resolve("gc"), BoscSettings.defaults(),
                new PbnRange(RANGE.limit(), RANGE.limit() + (1L << 40)))) {
            p.awaitDurable();
        }

        WorkerFsckRuns.Run r = fsck("--counts", file.toString());

        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("the GC metadata in " + rangeData.toAbsolutePath().resolve("gc") + " cannot be opened",
                "worker-gc-import").doesNotContain("holdfast-check-");
        assertThat(scratchLeft()).isEmpty();
    }

    @Test
    void run_runningWorker_refusedExit3() throws Exception {
        try (DataDirectory running = DataDirectory.open(dataDir)) {
            List<String> before = listing();

            WorkerFsckRuns.Run r = fsck("--counts", file.toString());

            assertThat(r.code()).isEqualTo(3);
            assertThat(r.err()).contains("in use by a running Holdfast server", "stop it first");
            assertThat(r.out()).isEmpty();
            assertThat(listing()).isEqualTo(before);
        }
    }

    @Test
    void run_truncatedOrOtherWorkersFile_refusedExit3() throws Exception {
        Path truncated = dir.resolve("truncated.counts");
        byte[] whole = Files.readAllBytes(file);
        Files.write(truncated, java.util.Arrays.copyOf(whole, whole.length - 7));
        Path other = dir.resolve("other.counts");
        PbnRange otherRange = new PbnRange(RANGE.limit(), RANGE.limit() + (1L << 40));
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(other, new WorkerCountsFile.Header(2, otherRange, MARK, 0))) {
            w.add(otherRange.first(), 1, 0, 0);
            w.finish();
        }

        WorkerFsckRuns.Run t = fsck("--counts", truncated.toString());
        WorkerFsckRuns.Run o = fsck("--counts", other.toString());
        WorkerFsckRuns.Run usage = fsck();

        assertThat(t.code()).isEqualTo(3);
        assertThat(t.err()).contains("refused", "truncated");
        assertThat(o.code()).isEqualTo(3);
        assertThat(o.err()).contains("is for worker 2", "another worker's");
        assertThat(usage.code()).isEqualTo(3);
        assertThat(usage.err()).contains("missing required option", "--counts", "run 'holdfast-server worker-fsck --help'");
        assertThat(scratchLeft()).isEmpty();
    }

    @Test
    void run_workerLoggedEveryRoutedDeltaLaterOperationsRoutedItNothing_countsComparedClean() throws Exception {
        workerLogsOperation6();
        long routed = GcDelta.deltaId(6, 0);
        long fileMark = GcDelta.deltaId(9, GcDelta.MAX_PART);
        Path f = countsFile("routed.counts", fileMark, 1, routed, 0);

        WorkerFsckRuns.Run r = fsck("--counts", f.toString());

        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("GC delta marks: file " + fileMark + ", worker " + routed + ", routed " + routed
                + " (0 in the outbox at the export) (the worker logged every delta routed to it and none after the export: counts"
                + " compared)", "RC below the catalog's (DANGEROUS: a sweep may free a referenced block): 0",
                "RC above the catalog's (leak side: kept past its last reference): 0", "pin disagreements: 0", "result: clean");
        WorkerFsckRuns.Run json = fsck("--counts", f.toString(), "--json");
        assertThat(json.code()).isZero();
        assertThat(json.out()).contains("\"result\":\"clean\"", "\"marks\":\"all-routed-applied\"", "\"routedMark\":" + routed,
                "\"outboxEntries\":0", "\"workerMark\":" + routed, "\"advice\":null");
    }

    @Test
    void run_gmaCountChangedBehindTheLogAfterRoutedDeltas_foundByRoutedMarkSkippedByVersion1Rule() throws Exception {
        workerLogsOperation6();
        try (BoscPipeline p = BoscPipeline.open(rangeData.resolve("gc"), BoscSettings.defaults().withCommitters(1), RANGE)) {
            p.withCurrentChunk(p.layout().chunkOf(FIRST), c -> c.addRc(p.layout().slotOf(FIRST + 1), -1)); // 2 -> 1, no log record
            p.syncGma();
        }
        long fileMark = GcDelta.deltaId(9, GcDelta.MAX_PART);
        Path v2 = countsFile("v2.counts", fileMark, 1, GcDelta.deltaId(6, 0), 0);
        Path v1 = v1CountsFile("v1.counts", fileMark, 1);

        WorkerFsckRuns.Run found = fsck("--counts", v2.toString());
        WorkerFsckRuns.Run skipped = fsck("--counts", v1.toString());

        assertThat(found.code()).as(found.out() + found.err()).isEqualTo(1);
        assertThat(found.out()).contains("RC below the catalog's (DANGEROUS: a sweep may free a referenced block): 1 e.g. PBN ["
                + (FIRST + 1) + "]", "result: errors");
        assertThat(skipped.code()).as("the equal-marks rule of a version 1 file: " + skipped.out()).isEqualTo(4);
        assertThat(skipped.out()).contains("routed unknown (routed deltas unknown: counts NOT compared)", "result: counts not compared")
                .doesNotContain("RC below");
    }

    @Test
    void run_workerBehindTheRoutedMark_notComparedExit4SayingWhyAndWhatToDo() throws Exception {
        long routed = GcDelta.deltaId(7, 0); // the worker logged up to MARK (operation 5) only
        long fileMark = GcDelta.deltaId(9, GcDelta.MAX_PART);
        Path waiting = countsFile("waiting.counts", fileMark, 1, routed, 2);
        Path acknowledged = countsFile("acknowledged.counts", fileMark, 1, routed, 0);

        WorkerFsckRuns.Run r = fsck("--counts", waiting.toString());
        WorkerFsckRuns.Run lost = fsck("--counts", acknowledged.toString(), "--json");

        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(4);
        assertThat(r.out()).contains("worker " + MARK + ", routed " + routed + " (2 in the outbox at the export) (worker behind the"
                + " routed mark: counts NOT compared)", "is below " + routed + ", the last delta the master routed to it",
                "2 deltas waited in the master's outbox", "Start the master and this worker, let the outbox drain",
                "stop the worker, then the master, export again (gc-rebuild --worker 1 --out FILE) and check again",
                "result: counts not compared").doesNotContain("RC below");
        assertThat(lost.code()).isEqualTo(4);
        assertThat(lost.out()).contains("\"marks\":\"worker-behind\"", "\"outboxEntries\":0", "the worker acknowledged deltas its GC"
                + " metadata no longer holds", "import this file (worker-gc-import)", "\"rcBelow\":{\"count\":0");
    }
}
