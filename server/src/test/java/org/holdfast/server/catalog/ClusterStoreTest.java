package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.cluster.StartOverMark;
import org.holdfast.server.cluster.NodeGeneration;
import org.holdfast.server.cluster.TakeoverFence;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterStoreTest {
    /** Worker 1 as the version 1 store wrote it (before workers were bound to tokens): epoch 3, PBNs [2^48, 2^48 + 2^40), "worker-a". */
    private static final String V1_WORKER_A = "01" + "0000000000000003" + "0001000000000000" + "0001010000000000"
            + "00000000000003e8" + "00000000000007d0" + "0008" + "776f726b65722d61";
    /** The same worker in version 2, bound to token 0123456789abcdef. */
    private static final String V2_WORKER_A = "02" + V1_WORKER_A.substring(2) + "10" + "30313233343536373839616263646566";
    private static final PbnRange RANGE_A = new PbnRange(1L << 48, (1L << 48) + (1L << 40));
    /** Worker 1's start-over mark, version 1: at 1000 ms, heard at 2000 ms, reason 3 (epoch-gap). */
    private static final String MARK_1 = "01" + "00000000000003e8" + "00000000000007d0" + "03";

    /** Worker 3's takeover fence, version 1: archive epoch 2, PBN floor 2^48 + 4096. */
    private static final String FENCE_3 = "01" + "0000000000000002" + "0001000000001000";

    @TempDir
    Path dir;

    /** The lost-after told to workers, version 1: 15 s. */
    private static final String TOLD_15S = "010000000000003a98";

    @Test
    void toldLostAfter_fixtureBytes_readBackAndWrittenTheSame_andAnUnreadableOneIsCorrupt() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            assertThat(s.toldLostAfter()).as("an older catalog keeps none").isNull();
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.TOLD_LOST_AFTER, HexFormat.of().parseHex(TOLD_15S));
            assertThat(s.toldLostAfter()).isEqualTo(java.time.Duration.ofSeconds(15));
            s.putToldLostAfter(java.time.Duration.ofSeconds(15));
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.TOLD_LOST_AFTER))).isEqualTo(TOLD_15S);
            assertThat(s.workers()).as("a key of its own, apart from the records").isEmpty();
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.TOLD_LOST_AFTER, HexFormat.of().parseHex("02" + TOLD_15S.substring(2)));
            assertThatThrownBy(s::toldLostAfter).isInstanceOf(org.holdfast.server.store.CorruptDataException.class)
                    .hasMessageContaining("unreadable lost-after told to workers: version 2");
        }
    }

    @Test
    void takeoverFences_fixtureBytes_readBackAndWrittenTheSame() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.fenceKey(3), HexFormat.of().parseHex(FENCE_3));
            assertThat(s.takeoverFences()).isEqualTo(Map.of(3L, new TakeoverFence(2, (1L << 48) + 4096)));
            s.putTakeoverFence(4, new TakeoverFence(2, (1L << 48) + 4096), true);
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.fenceKey(4)))).isEqualTo(FENCE_3);
            assertThat(HexFormat.of().formatHex(ClusterStore.fenceKey(3))).isEqualTo("6100000003");
        }
    }

    @Test
    void takeoverFences_unreadableValue_isCorruptDataSoTheMasterDoesNotStartWithoutIt() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.fenceKey(3), HexFormat.of().parseHex("02" + FENCE_3.substring(2)));
            assertThatThrownBy(() -> new ClusterStore(db).takeoverFences()).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("takeover fence").hasMessageContaining("version 2").hasMessageContaining("backup");
        }
    }

    /** Worker 3's node generation, version 1: issued 7, acknowledged 6. */
    private static final String GENERATION_3 = "01" + "0000000000000007" + "0000000000000006";

    @Test
    void nodeGenerations_fixtureBytes_readBackAndWrittenTheSame_anUnreadableOneIsCorrupt_andRemoveDeletesIt() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            assertThat(s.nodeGenerations()).as("an older catalog keeps none").isEmpty();
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.generationKey(3), HexFormat.of().parseHex(GENERATION_3));
            assertThat(s.nodeGenerations()).isEqualTo(Map.of(3L, new NodeGeneration(7, 6)));
            s.putNodeGeneration(4, new NodeGeneration(7, 6));
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.generationKey(4))))
                    .isEqualTo(GENERATION_3);
            assertThat(HexFormat.of().formatHex(ClusterStore.generationKey(3))).isEqualTo("6700000003");
            assertThat(s.workers()).as("a key of its own, apart from the records").isEmpty();
            s.remove(4);
            assertThat(s.nodeGenerations()).containsOnlyKeys(3L);
            // acknowledged above issued: a record no master writes
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.generationKey(3),
                    HexFormat.of().parseHex("01" + "0000000000000006" + "0000000000000007"));
            assertThatThrownBy(s::nodeGenerations).isInstanceOf(CorruptDataException.class).hasMessageContaining("node generation")
                    .hasMessageContaining("backup");
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.generationKey(3), HexFormat.of().parseHex("02" + GENERATION_3.substring(2)));
            assertThatThrownBy(s::nodeGenerations).isInstanceOf(CorruptDataException.class).hasMessageContaining("version 2");
        }
    }

    @Test
    void remove_deletesTheWorkersTakeoverFence() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            s.putTakeoverFence(3, new TakeoverFence(2, 10), false);
            s.remove(3);
            assertThat(s.takeoverFences()).isEmpty();
        }
    }

    @Test
    void put_thenReopen_readsTheSameRecordsBack() {
        WorkerRecord a = new WorkerRecord(1, "worker-a", 3, new PbnRange(1L << 48, (1L << 48) + (1L << 40)), 1000, 2000);
        WorkerRecord b = new WorkerRecord(0xffffffffL, "wörker.b", 1, new PbnRange(5, 6), 7, 8);
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            s.put(a);
            s.put(b);
            s.put(new WorkerRecord(1, "worker-a", 4, a.range(), 1000, 3000)); // a later epoch replaces the record
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(new ClusterStore(db).workers()).containsExactlyInAnyOrder(
                    new WorkerRecord(1, "worker-a", 4, a.range(), 1000, 3000), b);
        }
    }

    @Test
    void workers_unknownRecordVersion_isCorruptDataNamingTheStore() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.key(7), new byte[] {9, 0, 0});
            assertThatThrownBy(() -> new ClusterStore(db).workers()).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("record version 9").hasMessageContaining("backup");
        }
    }

    @Test
    void remove_thenReopen_recordIsGoneAndTheHighestRemovedIdStays() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            assertThat(s.highestRemovedId()).isZero();
            s.put(new WorkerRecord(1, "a", 1, new PbnRange(10, 20), 1, 1));
            s.put(new WorkerRecord(5, "b", 2, new PbnRange(50, 60), 1, 1));
            s.remove(5);
            s.remove(1); // a lower id later does not lower the mark
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            assertThat(s.workers()).isEmpty();
            assertThat(s.highestRemovedId()).isEqualTo(5);
        }
    }

    @Test
    void workers_version1RecordFixture_isReadAsNotBound() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.key(1), HexFormat.of().parseHex(V1_WORKER_A));
            assertThat(new ClusterStore(db).workers()).containsExactly(new WorkerRecord(1, "worker-a", 3, RANGE_A, 1000, 2000, ""));
        }
    }

    @Test
    void put_boundRecord_writesVersion2BytesAndReadsBackItsToken() {
        WorkerRecord a = new WorkerRecord(1, "worker-a", 3, RANGE_A, 1000, 2000, "0123456789abcdef");
        try (MetadataDb db = MetadataDb.open(dir)) {
            new ClusterStore(db).put(a);
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.key(1))))
                    .isEqualTo(V2_WORKER_A);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(new ClusterStore(db).workers()).containsExactly(a);
        }
    }

    @Test
    void workers_version2RecordWithAnOversizedOrUnprintableTokenId_isCorruptDataNotAStart() {
        String head = "02" + V1_WORKER_A.substring(2);
        for (String token : new String[] {"41" + "61".repeat(65), "10" + "0a".repeat(16)}) {
            try (MetadataDb db = MetadataDb.open(dir)) {
                db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.key(1), HexFormat.of().parseHex(head + token));
                assertThatThrownBy(() -> new ClusterStore(db).workers()).as(token).isInstanceOf(CorruptDataException.class)
                        .hasMessageContaining("unreadable worker record").hasMessageContaining("token id");
            }
        }
    }

    @Test
    void workers_version2RecordWithATruncatedTokenId_isCorruptData() {
        String cut = V2_WORKER_A.substring(0, V2_WORKER_A.length() - 2);
        try (MetadataDb db = MetadataDb.open(dir)) {
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.key(1), HexFormat.of().parseHex(cut));
            assertThatThrownBy(() -> new ClusterStore(db).workers()).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("unreadable worker record");
        }
    }

    @Test
    void putStartOverMark_thenReopen_readsItBackFromItsVersion1Bytes() {
        StartOverMark m = new StartOverMark(1000, StartOverReason.EPOCH_GAP, 2000);
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            s.put(new WorkerRecord(1, "worker-a", 3, RANGE_A, 1000, 2000, "0123456789abcdef"));
            s.putStartOverMark(1, new StartOverMark(500, StartOverReason.OTHER_ID, 600));
            s.putStartOverMark(1, m); // the newest report replaces the mark
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.markKey(1)))).isEqualTo(MARK_1);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            assertThat(s.startOverMarks()).isEqualTo(Map.of(1L, m));
            assertThat(s.workers()).as("the worker record is read as before").hasSize(1);
            s.clearStartOverMark(1);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(new ClusterStore(db).startOverMarks()).as("cleared for good").isEmpty();
        }
    }

    @Test
    void startOverMarks_catalogOfAnOlderMasterFixture_readsAsNoMark() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.key(1), HexFormat.of().parseHex(V2_WORKER_A));
            db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.key(2), HexFormat.of().parseHex(
                    "01" + "0000000000000001" + "0000000000000005" + "0000000000000006" + "0000000000000007" + "0000000000000008"
                    + "0001" + "62"));
            db.put(db.handle(MetadataDb.Column.CLUSTER), new byte[] {'r'}, HexFormat.of().parseHex("0000000000000009"));
            ClusterStore s = new ClusterStore(db);
            assertThat(s.startOverMarks()).isEmpty();
            assertThat(s.workers()).hasSize(2);
            assertThat(s.highestRemovedId()).isEqualTo(9);
        }
    }

    @Test
    void remove_workerWithAMark_deletesTheMarkInTheSameBatch() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterStore s = new ClusterStore(db);
            s.put(new WorkerRecord(1, "a", 1, new PbnRange(10, 20), 1, 1));
            s.put(new WorkerRecord(2, "b", 1, new PbnRange(30, 40), 1, 1));
            s.putStartOverMark(1, new StartOverMark(5, StartOverReason.NEW_MEMBERSHIP, 6));
            s.putStartOverMark(2, new StartOverMark(7, StartOverReason.UNREADABLE_OWNER, 8));
            s.remove(1);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(new ClusterStore(db).startOverMarks()).isEqualTo(Map.of(2L, new StartOverMark(7, StartOverReason.UNREADABLE_OWNER, 8)));
        }
    }

    @Test
    void startOverMarks_unknownVersionLengthOrReason_leftOutAndTheOthersRead() {
        StartOverMark two = new StartOverMark(7, StartOverReason.UNREADABLE_OWNER, 8);
        for (String bad : new String[] {"02" + MARK_1.substring(2), MARK_1 + "00", MARK_1.substring(0, MARK_1.length() - 2),
                MARK_1.substring(0, MARK_1.length() - 2) + "05", MARK_1.substring(0, MARK_1.length() - 2) + "00", ""}) {
            try (MetadataDb db = MetadataDb.open(dir)) {
                ClusterStore s = new ClusterStore(db);
                db.put(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.markKey(1), HexFormat.of().parseHex(bad));
                db.put(db.handle(MetadataDb.Column.CLUSTER), new byte[] {'s', 0}, HexFormat.of().parseHex(MARK_1)); // a key of no worker
                s.putStartOverMark(2, two);
                assertThat(s.startOverMarks()).as(bad).isEqualTo(Map.of(2L, two));
                s.clearStartOverMark(1); // what a rebuild of worker 1 does: the unreadable mark goes
                assertThat(db.get(db.handle(MetadataDb.Column.CLUSTER), ClusterStore.markKey(1))).as(bad).isNull();
            }
        }
    }
}
