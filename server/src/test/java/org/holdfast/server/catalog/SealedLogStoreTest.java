package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.common.protocol.TakeoverRecords;
import org.holdfast.common.protocol.TakeoverRecordsPart;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.WorkerKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's sealed-log records ({@link SealedLogStore}) on a real RocksDB: the fixture bytes of a
 * record and a summary; a full report replaces a worker's records, an incremental one adds and drops,
 * another worker's stay; an unreadable record is corrupt, never skipped; removing the worker drops them.
 */
class SealedLogStoreTest {
    /** Worker 3's log 2 at takeover epoch 1, log epoch 0x0102030405060708, 12416 bytes, SHA-256 00 01 .. 1f. */
    private static final String KEY_3_2 = "640000000300000002";
    private static final String RECORD_3_2 = "01" + "0000000000000001" + "0102030405060708" + "0000000000003080"
            + "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    /** Worker 3's summary: every log hashed. */
    private static final String SUMMARY_3 = "01" + "00000000";

    @TempDir
    Path dir;

    private static byte[] sha(int first) {
        byte[] s = new byte[32];
        for (int i = 0; i < 32; i++) {
            s[i] = (byte) (first + i);
        }
        return s;
    }

    private static SealedLogReport.Sealed log(int id, int shaFirst) {
        return new SealedLogReport.Sealed(id, 1, 0x0102030405060708L, 12416, sha(shaFirst));
    }

    @Test
    void record_fixtureBytes_writtenAndReadBack() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            store.apply(3, new SealedLogReport(true, List.of(log(2, 0)), List.of(), 0));
            HexFormat hex = HexFormat.of();
            assertThat(hex.formatHex(SealedLogStore.key(3, 2))).isEqualTo(KEY_3_2);
            assertThat(hex.formatHex(db.get(db.handle(MetadataDb.Column.CLUSTER), hex.parseHex(KEY_3_2)))).isEqualTo(RECORD_3_2);
            assertThat(hex.formatHex(db.get(db.handle(MetadataDb.Column.CLUSTER), SealedLogStore.summaryKey(3)))).isEqualTo(SUMMARY_3);
            SealedLogs read = store.forWorker(3);
            assertThat(read.recorded()).isTrue();
            assertThat(read.complete()).isTrue();
            assertThat(store.forWorker(4)).as("a worker that never reported").isSameAs(SealedLogs.NONE);
            assertThat(WorkerKeys.logKey(3, 1, 2, 0x0102030405060708L)).isEqualTo("workers/w3/e1/logs/00000002-0102030405060708.hfl");
        }
    }

    @Test
    void apply_fullReplaces_incrementalAddsAndDrops_otherWorkersUntouched_removeDropsAll() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            store.apply(3, new SealedLogReport(true, List.of(log(1, 0), log(2, 1)), List.of(), 0));
            store.apply(5, new SealedLogReport(true, List.of(log(1, 7)), List.of(), 0));
            store.apply(3, new SealedLogReport(false, List.of(log(3, 2), log(2, 9)), List.of(1), 2));
            assertThat(keysOf(store, 3)).containsExactly(WorkerKeys.logKey(3, 1, 2, 0x0102030405060708L),
                    WorkerKeys.logKey(3, 1, 3, 0x0102030405060708L));
            assertThat(store.forWorker(3).complete()).as("2 logs without a digest").isFalse();
            store.apply(3, new SealedLogReport(true, List.of(log(4, 3)), List.of(), 0));
            assertThat(keysOf(store, 3)).containsExactly(WorkerKeys.logKey(3, 1, 4, 0x0102030405060708L));
            assertThat(keysOf(store, 5)).as("another worker's records stay").hasSize(1);
            ClusterStore cluster = new ClusterStore(db);
            cluster.put(new WorkerRecord(3, "n3", 1, new org.holdfast.common.id.PbnRange(1L << 40, 2L << 40), 1, 1, ""));
            cluster.remove(3);
            assertThat(store.forWorker(3)).isSameAs(SealedLogs.NONE);
            assertThat(keysOf(store, 5)).hasSize(1);
        }
    }

    @Test
    void incrementalReports_pastTheLimitOfLogsPerWorker_refused_recordsUnchanged() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            List<SealedLogReport.Sealed> first = new java.util.ArrayList<>();
            List<SealedLogReport.Sealed> second = new java.util.ArrayList<>();
            for (int id = 1; id <= SealedLogReport.MAX_LOGS; id++) {
                (id <= SealedLogReport.MAX_LOGS / 2 ? first : second).add(log(id, id));
            }
            store.apply(3, new SealedLogReport(true, first, List.of(), 0));
            store.apply(3, new SealedLogReport(false, second, List.of(), 0));
            store.apply(3, new SealedLogReport(false, List.of(log(2, 99)), List.of(), 0)); // at the limit, a changed log: no more records
            // a worker (or a thief of its token) sending one new log id after another would grow the catalog without end
            assertThatThrownBy(() -> store.apply(3, new SealedLogReport(false, List.of(log(SealedLogReport.MAX_LOGS + 1, 0)), List.of(), 0)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than 65536");
            // one dropped makes room for one new
            store.apply(3, new SealedLogReport(false, List.of(log(SealedLogReport.MAX_LOGS + 2, 0)), List.of(1), 0));
            assertThat(keysOf(store, 3)).hasSize(SealedLogReport.MAX_LOGS)
                    .doesNotContain(WorkerKeys.logKey(3, 1, SealedLogReport.MAX_LOGS + 1, 0x0102030405060708L))
                    .contains(WorkerKeys.logKey(3, 1, SealedLogReport.MAX_LOGS + 2, 0x0102030405060708L));
        }
    }

    @Test
    void forWorker_unreadableRecord_corruptNeverSkipped() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            store.apply(3, new SealedLogReport(true, List.of(log(2, 0)), List.of(), 0));
            db.put(db.handle(MetadataDb.Column.CLUSTER), HexFormat.of().parseHex(KEY_3_2), HexFormat.of().parseHex("02"
                    + RECORD_3_2.substring(2)));
            assertThatThrownBy(() -> store.forWorker(3)).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("unreadable").hasMessageContaining("Restore the catalog from a backup");
        }
    }

    @Test
    void part_boundedPartsInLogIdOrder_resumingAfterTheLast_noneForAWorkerThatNeverReported() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            int n = TakeoverRecordsPart.MAX_LOGS + 7;
            List<SealedLogReport.Sealed> logs = new java.util.ArrayList<>();
            for (int id = 1; id <= n; id++) {
                logs.add(log(id, id));
            }
            store.apply(3, new SealedLogReport(true, logs, List.of(), 0));
            store.apply(4, new SealedLogReport(true, List.of(log(1, 9)), List.of(), 2));

            TakeoverRecordsPart one = store.part(3, new TakeoverRecords(5, 0));
            assertThat(one.requestId()).isEqualTo(5);
            assertThat(one.status()).isEqualTo(TakeoverRecordsPart.RECORDS);
            assertThat(one.more()).isTrue();
            assertThat(one.complete()).isTrue();
            assertThat(one.sealed()).containsExactlyElementsOf(logs.subList(0, TakeoverRecordsPart.MAX_LOGS));
            TakeoverRecordsPart two = store.part(3, new TakeoverRecords(6, TakeoverRecordsPart.MAX_LOGS));
            assertThat(two.more()).isFalse();
            assertThat(two.sealed()).containsExactlyElementsOf(logs.subList(TakeoverRecordsPart.MAX_LOGS, n));
            assertThat(store.part(4, new TakeoverRecords(7, 0)).sealed()).as("the next worker's records stay apart")
                    .containsExactly(log(1, 9));
            assertThat(store.part(4, new TakeoverRecords(7, 0)).complete()).as("2 logs without a digest").isFalse();
            assertThat(store.part(5, new TakeoverRecords(8, 0)).status()).isEqualTo(TakeoverRecordsPart.NONE);
        }
    }

    private static List<String> keysOf(SealedLogStore store, long worker) {
        return store.forWorker(worker).keys();
    }
}
