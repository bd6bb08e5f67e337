package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker's import of exported GC counts over a real range store and GC metadata on disk: what
 * the new metadata holds (records, the grace of unreferenced handed-out PBNs, the mark), a kill at
 * each step leaving the old directory or none and a re-run giving the same metadata, and the
 * refusal of a file that misses deltas the worker logged after the export.
 */
class WorkerGcImportCrashTest {
    private static final PbnRange RANGE = new PbnRange(1L << 48, (1L << 48) + (1L << 40));
    private static final long FIRST = RANGE.first();
    private static final int STORED = 20;
    private static final long MARK = GcDelta.deltaId(5, GcDelta.MAX_PART);
    private static final Duration GRACE = Duration.ofHours(2);
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-06-01T00:00:00Z"), ZoneOffset.UTC);
    private static final long GRACE_UNTIL = CLOCK.millis() + GRACE.toMillis();

    @TempDir
    Path dir;
    private Path rangeData;
    private Path file;

    @BeforeEach
    void rangeStoreWithLostCounts() throws Exception {
        rangeData = dir.resolve("range-data");
        try (MetadataDb db = MetadataDb.open(rangeData.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(rangeData.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0,
                     RANGE), db)) {
            Random r = new Random(7);
            for (int i = 0; i < STORED; i++) {
                byte[] b = new byte[4096];
                r.nextBytes(b);
                store.append(MessageDigest.getInstance("SHA-256").digest(b), 0, b, 0, b.length, FormatVersions.CODEC_RAW, b.length);
            }
            store.sync();
        }
        // as the worker's start finds it after range-data/gc was lost: fresh metadata marked counts-lost
        try (WorkerGcMetadata fresh = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            fresh.checkHistoryAgainst(r -> STORED);
            fresh.claim(RANGE);
        }
        file = dir.resolve("w1.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(file, new WorkerCountsFile.Header(1, RANGE, MARK, CLOCK.millis()))) {
            for (int i = 0; i < 10; i++) {
                w.add(FIRST + i, 1 + i % 2, i == 3 ? 2 : 0, 0);
            }
            w.add(FIRST + 12, 0, 0, CLOCK.millis() + 9 * GRACE.toMillis()); // dereferenced, kept by a retained snapshot's expiry
            w.add(FIRST + 9000, 1, 0, 0); // in the second GMA chunk, never stored here (missing)
            w.finish();
        }
    }

    @AfterEach
    void disarm() {
        KillPoints.disarm();
    }

    private WorkerGcImport.Report runImport() {
        return new WorkerGcImport(rangeData, GRACE, CLOCK, line -> { }).run(file);
    }

    private Map<Long, List<Long>> state() {
        Map<Long, List<Long>> out = new TreeMap<>();
        try (BoscPipeline p = BoscPipeline.open(rangeData.resolve("gc"), BoscSettings.defaults(), RANGE)) {
            out.put(-1L, List.of(p.lastOpId()));
            p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> out.put(pbn, List.of((long) rc, (long) pins, expiry)));
        }
        return out;
    }

    private List<String> listing() throws Exception {
        try (Stream<Path> s = Files.list(rangeData)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void run_countsFile_recordsGraceOfUnreferencedStoredAndMarkInNewMetadata_countsLostGone() {
        WorkerGcImport.Report r = runImport();

        Map<Long, List<Long>> s = state();
        assertThat(s.get(-1L)).as("the log's mark").containsExactly(MARK);
        assertThat(s.get(FIRST)).containsExactly(1L, 0L, 0L);
        assertThat(s.get(FIRST + 1)).containsExactly(2L, 0L, 0L);
        assertThat(s.get(FIRST + 3)).containsExactly(2L, 2L, 0L);
        assertThat(s.get(FIRST + 12)).as("its own expiry is later than the grace").containsExactly(0L, 0L, CLOCK.millis() + 9 * GRACE.toMillis());
        assertThat(s.get(FIRST + 15)).as("stored, in no record: kept for the grace").containsExactly(0L, 0L, GRACE_UNTIL);
        assertThat(s.get(FIRST + 9000)).containsExactly(1L, 0L, 0L);
        assertThat(r.records()).isEqualTo(12);
        assertThat(r.handedOutLimit()).isGreaterThanOrEqualTo(FIRST + STORED);
        assertThat(r.countsLostRemoved()).isTrue();
        assertThat(rangeData.resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST)).doesNotExist();
        assertThat(rangeData.resolve(r.replacedDir()).resolve(WorkerGcMetadata.COUNTS_LOST)).as("kept with the old directory").exists();
    }

    @Test
    void run_killedAtEachStep_leavesOldOrNoDirectory_rerunGivesSameMetadata() throws Exception {
        Map<Long, List<Long>> reference = null;
        List<KillPoint> points = List.of(KillPoints.GC_REBUILD_AFTER_CHUNK, KillPoints.GC_REBUILD_BEFORE_VERIFY,
                KillPoints.GC_REBUILD_BETWEEN_RENAMES);
        for (int k = 0; k < points.size(); k++) {
            boolean countsLost = Files.exists(rangeData.resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST));
            KillPoints.arm(points.get(k), 1, KillPoints.Mode.THROW);
            assertThatThrownBy(this::runImport).isInstanceOf(KillPoints.Killed.class);
            KillPoints.disarm();
            if (k < 2) {
                assertThat(Files.exists(rangeData.resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST))).as("old gc/ untouched, point %d", k)
                        .isEqualTo(countsLost);
                assertThat(rangeData.resolve(WorkerGcImport.BUILD_DIR)).exists();
            } else {
                assertThat(rangeData.resolve("gc")).as("between the renames").doesNotExist();
            }
            runImport();
            assertThat(rangeData.resolve(WorkerGcImport.BUILD_DIR)).doesNotExist();
            Map<Long, List<Long>> s = state();
            if (reference == null) {
                reference = s;
            } else {
                assertThat(s).as("after the kill at point %d", k).isEqualTo(reference);
            }
        }
        assertThat(reference.get(-1L)).containsExactly(MARK);
    }

    @Test
    void run_metadataLoggedDeltasAboveTheMark_refusedNothingChanged_replaysAtOrBelowTheMarkLogNothing() throws Exception {
        runImport();
        try (WorkerGcMetadata m = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            GcDelta replay = new GcDelta(5, 0, 1, new byte[] {1}, new long[] {FIRST}, new long[] {1});
            assertThat(m.log(replay, RANGE)).as("at or below the mark: a replay, in the counts already").isEqualTo(MARK);
            GcDelta later = new GcDelta(6, 0, 1, new byte[] {1}, new long[] {FIRST}, new long[] {1});
            assertThat(m.log(later, RANGE)).isEqualTo(later.deltaId());
        }
        assertThat(state().get(FIRST)).as("the later delta applied once").containsExactly(2L, 0L, 0L);
        List<String> before = listing();
        Map<Long, List<Long>> stateBefore = state();

        assertThatThrownBy(this::runImport).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("acknowledged deltas after the export").hasMessageContaining("nothing was changed");

        assertThat(listing()).isEqualTo(before);
        assertThat(state()).isEqualTo(stateBefore);
    }

    @Test
    void run_staleFileAfterTheWorkerRanAndLostItsMetadataAgain_refusedByTheAcknowledgedMark() throws Exception {
        runImport();
        GcDelta later = new GcDelta(6, 0, 1, new byte[] {1}, new long[] {FIRST + 12}, new long[] {1}); // a commit after the export
        try (WorkerGcMetadata m = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            m.log(later, RANGE);
        }
        assertThat(AcknowledgedDeltaMark.read(rangeData)).as("kept outside gc/").isEqualTo(later.deltaId());
        // the master dropped the acknowledged delta from its outbox; then range-data/gc is lost again
        new org.holdfast.server.gc.GcDirectorySwap(rangeData, "test").deleteTree(rangeData.resolve("gc"));
        List<String> before = listing();

        // without the mark this stale file would be imported: FIRST + 12's RC 1 from the later commit lost, freed after the grace
        assertThatThrownBy(this::runImport).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("acknowledged deltas after the export").hasMessageContaining(AcknowledgedDeltaMark.FILE)
                .hasMessageContaining("nothing was changed");

        assertThat(listing()).isEqualTo(before);
        assertThat(rangeData.resolve("gc")).doesNotExist();
    }

    @Test
    void run_workerLoggedAnotherMastersDeltasAboveEveryMarkHere_refused_importedOnceGcAndAcknowledgedMarkMovedAside() throws Exception {
        runImport();
        // a delta id this master never issued (its next operation is 6): another master's, as a worker fenced for it at REGISTER holds
        GcDelta foreign = new GcDelta(1_000, 0, 1, new byte[] {1}, new long[] {FIRST + 15}, new long[] {1});
        try (WorkerGcMetadata m = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            m.log(foreign, RANGE);
        }
        assertThatThrownBy(this::runImport).as("exporting again gives the same mark: refused however often it is tried")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("acknowledged deltas after the export");

        // docs/operations.md's way out, the worker stopped before the export: both moved aside, then the import
        Files.move(rangeData.resolve("gc"), dir.resolve("gc.aside"));
        Files.move(rangeData.resolve(AcknowledgedDeltaMark.FILE), dir.resolve("gc-acknowledged.aside"));
        runImport();

        assertThat(CountsImportRecord.read(rangeData.resolve("gc")).mark()).as("reported at REGISTER: the fence lifts").isEqualTo(MARK);
        Map<Long, List<Long>> s = state();
        assertThat(s.get(-1L)).containsExactly(MARK);
        assertThat(s.get(FIRST + 15)).as("the foreign increment is gone: the catalog's counts").containsExactly(0L, 0L, GRACE_UNTIL);
        try (WorkerGcMetadata m = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            GcDelta next = new GcDelta(6, 0, 1, new byte[] {1}, new long[] {FIRST + 15}, new long[] {1});
            assertThat(m.log(next, RANGE)).as("this master's next delta is logged, not dropped as a replay").isEqualTo(next.deltaId());
        }
        assertThat(state().get(FIRST + 15).get(0)).isEqualTo(1L);
    }

    @Test
    void run_acknowledgedMarkFileDamaged_refusedNothingChanged() throws Exception {
        Files.writeString(rangeData.resolve(AcknowledgedDeltaMark.FILE), "not a number\n");
        List<String> before = listing();

        assertThatThrownBy(this::runImport).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds no acknowledged GC delta mark").hasMessageContaining("nothing was changed");

        assertThat(listing()).isEqualTo(before);
        assertThat(rangeData.resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST)).as("the old gc/ untouched").exists();
    }
}
