package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The master's GC outbox on a real catalog: the byte layout every later release must read, order, deletion, refusals. */
class GcOutboxTest {
    /** Worker 3, operation 5, part 1: key u32 worker id + u64 delta id (5 × 2^20 + 1). */
    private static final String KEY_W3_OP5_PART1 = "000000030000000000500001";
    /**
     * Version 1: u8 version, u32 count 2; RC add −1 to PBN 2^48 + 1; pin add +1 to PBN 7 (each u8 kind,
     * u64 PBN, u64 value, big-endian). Written by the first release with an outbox; never change it.
     */
    private static final String V1_TWO_UPDATES = "01" + "00000002"
            + "01" + "0001000000000001" + "ffffffffffffffff"
            + "03" + "0000000000000007" + "0000000000000001";

    /** Worker 3's routed mark: key u32 worker id alone. */
    private static final String ROUTED_KEY_W3 = "00000003";
    /** Routed mark version 1: u8 version, u64 delta id 5 × 2^20 + 1. Written by the first release with routed marks; never change it. */
    private static final String ROUTED_V1_OP5_PART1 = "01" + "0000000000500001";

    @TempDir
    Path dir;

    private static void putRouted(GcOutbox outbox, long workerId, long deltaId, GcDelta... deltas) {
        try (MetadataBatch b = new MetadataBatch()) {
            for (GcDelta d : deltas) {
                outbox.put(b, workerId, d);
            }
            outbox.putRoutedMark(b, workerId, deltaId);
            outbox.writeSynced(b);
        }
    }

    private static GcDelta delta(long opId, int part, long... pbns) {
        byte[] kinds = new byte[pbns.length];
        long[] values = new long[pbns.length];
        for (int i = 0; i < pbns.length; i++) {
            kinds[i] = GcDelta.RC_ADD;
            values[i] = i + 1;
        }
        return new GcDelta(opId, part, pbns.length, kinds, pbns, values);
    }

    private static void put(GcOutbox outbox, long workerId, GcDelta... deltas) {
        try (MetadataBatch b = new MetadataBatch()) {
            for (GcDelta d : deltas) {
                outbox.put(b, workerId, d);
            }
            outbox.writeSynced(b);
        }
    }

    @Test
    void put_version1Entry_writesTheGoldenBytesAndReadsThemBack() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            GcOutbox outbox = new GcOutbox(db);
            GcDelta d = new GcDelta(5, 1, 2, new byte[] {GcDelta.RC_ADD, GcDelta.PIN_ADD}, new long[] {(1L << 48) + 1, 7},
                    new long[] {-1, 1});
            put(outbox, 3, d);
            byte[] key = HexFormat.of().parseHex(KEY_W3_OP5_PART1);
            assertThat(HexFormat.of().formatHex(GcOutbox.key(3, d.deltaId()))).isEqualTo(KEY_W3_OP5_PART1);
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.GC_OUTBOX), key))).isEqualTo(V1_TWO_UPDATES);
            assertThat(outbox.after(3, 0, 10)).containsExactly(d);
        }
    }

    @Test
    void decode_goldenVersion1Bytes_readAsTheDelta() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            db.put(db.handle(MetadataDb.Column.GC_OUTBOX), HexFormat.of().parseHex(KEY_W3_OP5_PART1), HexFormat.of().parseHex(V1_TWO_UPDATES));
            GcDelta d = new GcOutbox(db).after(3, 0, 1).get(0);
            assertThat(d.opId()).isEqualTo(5);
            assertThat(d.part()).isEqualTo(1);
            assertThat(d.kinds()).containsExactly(GcDelta.RC_ADD, GcDelta.PIN_ADD);
            assertThat(d.pbns()).containsExactly((1L << 48) + 1, 7);
            assertThat(d.values()).containsExactly(-1, 1);
        }
    }

    @Test
    void lastDeltaId_entriesOfNeighbourWorkers_namesOnlyThisWorkersHighest() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            GcOutbox outbox = new GcOutbox(db);
            put(outbox, 2, delta(9, 0, 40), delta(4, 1, 41));
            put(outbox, 3, delta(100, 0, 70));
            assertThat(outbox.lastDeltaId(2)).isEqualTo(GcDelta.deltaId(9, 0));
            assertThat(outbox.lastDeltaId(1)).as("no entry; worker 2's are above it").isZero();
            assertThat(outbox.lastDeltaId(4)).as("no entry; worker 3's are below it").isZero();
            outbox.deleteUpTo(2, GcDelta.deltaId(9, 0));
            assertThat(outbox.lastDeltaId(2)).isZero();
        }
    }

    @Test
    void after_entriesOfTwoWorkers_eachInDeltaIdOrderAndApart() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            GcOutbox outbox = new GcOutbox(db);
            put(outbox, 2, delta(9, 0, 40), delta(4, 1, 41), delta(4, 0, 42));
            put(outbox, 1, delta(5, 0, 10));
            put(outbox, 7, delta(1, 0, 70));
            List<Long> ids = outbox.after(2, 0, 10).stream().map(GcDelta::deltaId).toList();
            assertThat(ids).containsExactly(GcDelta.deltaId(4, 0), GcDelta.deltaId(4, 1), GcDelta.deltaId(9, 0));
            assertThat(outbox.after(2, GcDelta.deltaId(4, 0), 1)).extracting(GcDelta::deltaId).containsExactly(GcDelta.deltaId(4, 1));
            assertThat(outbox.after(2, GcDelta.deltaId(9, 0), 10)).isEmpty();
            assertThat(outbox.count(2)).isEqualTo(3);
            assertThat(outbox.workers()).containsExactly(1L, 2L, 7L);
        }
    }

    @Test
    void deleteUpTo_acknowledgedMark_removesOnlyThatWorkersEntriesAtOrBelowIt() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            GcOutbox outbox = new GcOutbox(db);
            put(outbox, 2, delta(3, 0, 40), delta(4, 0, 41), delta(6, 0, 42));
            put(outbox, 3, delta(1, 0, 50));
            assertThat(outbox.deleteUpTo(2, GcDelta.deltaId(4, 0))).isEqualTo(2);
            assertThat(outbox.after(2, 0, 10)).extracting(GcDelta::deltaId).containsExactly(GcDelta.deltaId(6, 0));
            assertThat(outbox.count(3)).as("another worker's entries stay").isEqualTo(1);
            put(outbox, 2, delta(3, 0, 40)); // written again by a re-drive: the same key comes back
            assertThat(outbox.deleteUpTo(2, GcDelta.deltaId(4, 0))).isEqualTo(1);
            assertThat(outbox.deleteUpTo(2, Long.MAX_VALUE)).isEqualTo(1);
            assertThat(outbox.count(2)).isZero();
            assertThat(outbox.workers()).containsExactly(3L);
        }
    }

    @Test
    void after_unreadableValue_refusedAsCorruptNamingTheEntry() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            byte[] key = HexFormat.of().parseHex(KEY_W3_OP5_PART1);
            GcOutbox outbox = new GcOutbox(db);
            for (String bad : new String[] {"", "02" + V1_TWO_UPDATES.substring(2), "0100000003" + V1_TWO_UPDATES.substring(10),
                    "0100000000", V1_TWO_UPDATES.substring(0, V1_TWO_UPDATES.length() - 2)}) {
                db.put(db.handle(MetadataDb.Column.GC_OUTBOX), key, HexFormat.of().parseHex(bad));
                assertThatThrownBy(() -> outbox.after(3, 0, 10)).as(bad).isInstanceOf(CorruptDataException.class)
                        .hasMessageContaining("worker 3, delta " + GcDelta.deltaId(5, 1)).hasMessageContaining("restore the master's catalog");
            }
        }
    }

    @Test
    void putRoutedMark_version1_writesTheGoldenBytesAndReadsThemBack() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            GcOutbox outbox = new GcOutbox(db);
            assertThat(outbox.routedMark(3)).as("no mark: unknown, not 0").isEmpty();
            putRouted(outbox, 3, GcDelta.deltaId(5, 1), delta(5, 0, 40), delta(5, 1, 41));

            assertThat(HexFormat.of().formatHex(GcOutbox.routedKey(3))).isEqualTo(ROUTED_KEY_W3);
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.GC_OUTBOX), HexFormat.of().parseHex(ROUTED_KEY_W3))))
                    .isEqualTo(ROUTED_V1_OP5_PART1);
            assertThat(outbox.routedMark(3)).hasValue(GcDelta.deltaId(5, 1));
        }
    }

    @Test
    void routedMark_goldenVersion1Bytes_readAsTheDeltaId() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            db.put(db.handle(MetadataDb.Column.GC_OUTBOX), HexFormat.of().parseHex(ROUTED_KEY_W3),
                    HexFormat.of().parseHex(ROUTED_V1_OP5_PART1));

            assertThat(new GcOutbox(db).routedMark(3)).hasValue(GcDelta.deltaId(5, 1));
            assertThat(new GcOutbox(db).routedMark(2)).isEmpty();
        }
    }

    @Test
    void entries_routedMarksBesideThem_countedListedAndDeletedAsIfAbsentMarksKept() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            GcOutbox outbox = new GcOutbox(db);
            putRouted(outbox, 2, GcDelta.deltaId(9, 0), delta(4, 0, 40), delta(9, 0, 41));
            putRouted(outbox, 3, GcDelta.deltaId(6, 0));
            putRouted(outbox, 4, GcDelta.deltaId(8, 0), delta(8, 0, 70));

            assertThat(outbox.workers()).as("worker 3 has a mark, no entry").containsExactly(2L, 4L);
            assertThat(outbox.lastDeltaId(3)).as("its mark is no entry").isZero();
            assertThat(outbox.count(3)).isZero();
            assertThat(outbox.count(2)).isEqualTo(2);
            assertThat(outbox.after(2, 0, 10)).extracting(GcDelta::deltaId).containsExactly(GcDelta.deltaId(4, 0), GcDelta.deltaId(9, 0));
            assertThat(outbox.after(3, 0, 10)).isEmpty();
            assertThat(outbox.deleteUpTo(2, Long.MAX_VALUE)).isEqualTo(2);
            assertThat(outbox.workers()).containsExactly(4L);
            assertThat(outbox.lastDeltaId(2)).isZero();
            assertThat(outbox.routedMark(2)).as("kept after the entries are acknowledged").hasValue(GcDelta.deltaId(9, 0));
            assertThat(outbox.routedMark(4)).hasValue(GcDelta.deltaId(8, 0));
        }
    }

    @Test
    void routedMark_unreadableValue_refusedAsCorruptNamingTheWorker() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            byte[] key = HexFormat.of().parseHex(ROUTED_KEY_W3);
            GcOutbox outbox = new GcOutbox(db);
            String negative = "01ffffffffffffffff";
            for (String bad : new String[] {"", "02" + ROUTED_V1_OP5_PART1.substring(2), ROUTED_V1_OP5_PART1 + "00", negative}) {
                db.put(db.handle(MetadataDb.Column.GC_OUTBOX), key, HexFormat.of().parseHex(bad));
                assertThatThrownBy(() -> outbox.routedMark(3)).as(bad).isInstanceOf(CorruptDataException.class)
                        .hasMessageContaining("worker 3, routed mark").hasMessageContaining("restore the master's catalog");
            }
        }
    }
}
