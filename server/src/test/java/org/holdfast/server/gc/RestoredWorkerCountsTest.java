package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GC side of a catalog restore on a master with data=workers, on a real catalog: the stale outbox
 * goes, operation ids jump past what the workers applied, every worker is fenced, and only a counts
 * file exported from the restored catalog lifts a fence.
 */
class RestoredWorkerCountsTest {
    private static final PbnRange W1 = new PbnRange(1L << 48, (1L << 48) + (1L << 32));
    private static final PbnRange W2 = new PbnRange(W1.limit(), W1.limit() + (1L << 32));

    @TempDir
    Path dir;

    /** A stopped master's catalog as the backup held it: two workers, operation 100 next, two unacknowledged deltas. */
    private void backupCatalog() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            ClusterStore cluster = new ClusterStore(db);
            cluster.put(new WorkerRecord(1, "node-a", 1, W1, 1L, 1L, ""));
            cluster.put(new WorkerRecord(2, "node-b", 1, W2, 1L, 1L, ""));
            GcOutbox outbox = new GcOutbox(db);
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, FormatVersions.META_CLUSTER_DATA_MODE, FormatVersions.CLUSTER_DATA_ON_WORKERS);
                db.putMetaLong(b, GcRecords.NEXT_OP_ID, 100);
                db.putMetaLong(b, GcRecords.ROUTED_THROUGH, 99);
                // operation 98's release of W1's first block, not yet acknowledged at the backup (the worker applied it since)
                outbox.put(b, 1, new GcDelta(98, 0, 1, new byte[] {GcDelta.RC_ADD}, new long[] {W1.first()}, new long[] {-1}));
                outbox.put(b, 2, new GcDelta(99, 0, 1, new byte[] {GcDelta.RC_ADD}, new long[] {W2.first()}, new long[] {1}));
                outbox.putRoutedMark(b, 1, GcDelta.deltaId(98, 0));
                outbox.putRoutedMark(b, 2, GcDelta.deltaId(99, 0));
                outbox.writeSynced(b);
            }
        }
    }

    private void countsFile(Path file, long worker, PbnRange range, long mark) {
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(file, new WorkerCountsFile.Header(worker, range, mark, 1L))) {
            w.add(range.first(), 1, 0, 0);
            w.finish();
        }
    }

    @Test
    void run_dropsTheOutbox_jumpsOperationIds_fencesEveryWorker() {
        backupCatalog();
        // the lost master ran on after the backup: a worker's log holds deltas up to operation 5000
        long appliedByWorker1 = GcDelta.deltaId(5_000, 0);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            Catalog catalog = new Catalog(db);
            RestoredWorkerCounts.Report r = RestoredWorkerCounts.run(catalog, 1_700_000_000_000L);

            assertThat(r.fenced()).containsExactly(1L, 2L);
            assertThat(r.outboxEntriesDropped()).isEqualTo(2);
            assertThat(r.nextOpIdAfter()).as("the restore's time in ms, above the backup's counter + 2^32").isEqualTo(1_700_000_000_000L);
            GcOutbox outbox = new GcOutbox(db);
            assertThat(outbox.count(1)).as("a replay of the stale decrement would drop a count the worker already dropped").isZero();
            assertThat(outbox.count(2)).isZero();
            assertThat(outbox.routedMark(1)).isEmpty();
            assertThat(db.metaLong(GcRecords.ROUTED_THROUGH, -1)).isEqualTo(-1);
            assertThat(WorkerGcExport.routedOf(catalog, 1).unknownWhy()).as("routed marks unknown, not stale, and the recovery goes on")
                    .contains("restored", "worker-gc-import").doesNotContain("start the master");
            // the export from the restored catalog is above every delta the worker applied: its import is accepted
            assertThat(WorkerGcExport.markOf(catalog, 1)).isGreaterThan(appliedByWorker1).isEqualTo(r.floor());
            WorkerCountsFences fences = new WorkerCountsFences(db);
            assertThat(fences.all()).extracting(WorkerCountsFences.Fence::workerId).containsExactly(1L, 2L);
            assertThat(fences.of(1)).isEqualTo(new WorkerCountsFences.Fence(1, r.floor(), 1_700_000_000_000L));
            assertThat(fences.sweepRefusal(1)).contains("predate", "gc-rebuild --worker 1 --out FILE", "worker-gc-import",
                    "--counts-imported");
            assertThat(fences.sweepRefusal(3)).isNull();
            assertThat(new ClusterStore(db).highestRemovedId()).as("ids a node may have got after the backup are never given again")
                    .isEqualTo(2 + RestoredWorkerCounts.IDS_SKIPPED).isEqualTo(r.idsRetiredThrough());
        }
    }

    /**
     * The same backup restored twice (the first restored master lost before a new catalog backup, or the
     * wrong backup restored first and the restore redone): the second restore must not hand out the
     * operation ids the first restored master used, which its workers logged and would drop as resends
     * (an increment dropped frees a block in use on a worker it registered after the first restore, which
     * no fence covers; a fenced worker's import is refused, so its fence is never lifted).
     */
    @Test
    void run_twiceFromTheSameBackup_neverReusesTheFirstRestoredMastersOperationIds() {
        long t1 = 1_700_000_000_000L;
        long usedByFirst;
        backupCatalog();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            long from = RestoredWorkerCounts.run(new Catalog(db), t1).nextOpIdAfter();
            usedByFirst = from + 1_000_000; // a million GC operations in the hour it ran
        }
        // restored again from the same backup an hour later: the catalog is the backup's once more
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, GcRecords.NEXT_OP_ID, 100);
                db.write(b, true);
            }
            RestoredWorkerCounts.Report again = RestoredWorkerCounts.run(new Catalog(db), t1 + 3_600_000L);
            assertThat(again.nextOpIdAfter()).as("after every operation id the first restored master used").isGreaterThan(usedByFirst);
            assertThat(WorkerGcExport.markOf(new Catalog(db), 1)).isGreaterThan(GcDelta.deltaId(usedByFirst, GcDelta.MAX_PART));
        }
    }

    /** A fence's value, version 1: u8 version, u64 floor, u64 restore time (epoch ms). Never change it. */
    @Test
    void fenceValue_goldenBytes_andAnUnreadableOneStillFences() {
        assertThat(java.util.HexFormat.of().formatHex(WorkerCountsFences.encode(0x0000_0400_0000_0000L, 1_700_000_000_000L)))
                .isEqualTo("01" + "0000040000000000" + "0000018bcfe56800");
        assertThat(new String(WorkerCountsFences.key(7), StandardCharsets.US_ASCII)).isEqualTo("gc.counts-fence.w7");
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            db.put(db.handle(MetadataDb.Column.META), WorkerCountsFences.key(7), new byte[] {2, 0});
            assertThat(new WorkerCountsFences(db).sweepRefusal(7)).isNotNull();
        }
    }

    @Test
    void release_onlyByACountsFileOfTheRestoredCatalog() throws Exception {
        backupCatalog();
        Path before = dir.resolve("w1-before-restore.counts");
        countsFile(before, 1, W1, GcDelta.deltaId(99, GcDelta.MAX_PART)); // exported from the lost master, before the restore
        long floor;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            floor = RestoredWorkerCounts.run(new Catalog(db), 1L).floor();
        }
        Path after = dir.resolve("w1.counts");
        countsFile(after, 1, W1, floor);
        Path other = dir.resolve("w2.counts");
        countsFile(other, 2, W2, floor);

        assertThat(release(1, before)).as("a file with counts of deltas the restored catalog never made").isEqualTo(3);
        assertThat(out).contains("exported before the catalog restore", "the fence stays");
        assertThat(release(1, other)).isEqualTo(3);
        assertThat(out).contains("holds the counts of worker 2");
        assertThat(release(1, dir.resolve("missing.counts"))).isEqualTo(3);
        assertThat(fenced()).containsExactly(1L, 2L);

        assertThat(release(1, after)).isZero();
        assertThat(out).contains("lifted the counts fence of worker 1", "result: lifted");
        assertThat(fenced()).containsExactly(2L);
        assertThat(release(1, after)).as("again: nothing to do").isZero();
        assertThat(out).contains("result: not fenced");
    }

    private String out = "";

    private int release(long worker, Path file) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = CountsFenceRelease.run(dir, worker, file, new PrintStream(o, true, StandardCharsets.UTF_8),
                new PrintStream(e, true, StandardCharsets.UTF_8));
        out = o.toString(StandardCharsets.UTF_8) + e.toString(StandardCharsets.UTF_8);
        return code;
    }

    private java.util.List<Long> fenced() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            return new WorkerCountsFences(db).all().stream().map(WorkerCountsFences.Fence::workerId).toList();
        }
    }
}
