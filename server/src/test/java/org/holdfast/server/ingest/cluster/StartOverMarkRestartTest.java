package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.cluster.StartOverMark;
import org.holdfast.server.cluster.WorkerCapacity;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's index start-over marks on a real catalog (RocksDB on disk), reopened as a restarted
 * master reopens it: a mark stays until a rebuild started after it was heard answers it, and that
 * answer is durable too.
 */
class StartOverMarkRestartTest {
    private static final String TOKEN = "0123456789abcdef";
    @TempDir
    Path dir;

    private static DedupLinks links(MetadataDb db) {
        return new DedupLinks(true, new ClusterStore(db));
    }

    @Test
    void persist_masterReopened_keepsEachMarkUntilARebuildAfterItClearsItForGood() {
        StartOverMark gap = new StartOverMark(1_000, StartOverReason.EPOCH_GAP, 2_000);
        StartOverMark other = new StartOverMark(3_000, StartOverReason.OTHER_ID, 4_000);
        try (MetadataDb db = MetadataDb.open(dir)) {
            new ClusterStore(db).put(new WorkerRecord(1, "w-one", 3, new PbnRange(10, 20), 1, 1));
            new ClusterStore(db).put(new WorkerRecord(2, "w-two", 3, new PbnRange(30, 40), 1, 1));
            DedupLinks links = links(db);
            links.startedOver(1, gap);
            links.persist(1);
            links.startedOver(2, other);
            links.persist(2);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            DedupLinks links = links(db);
            assertThat(links.startedOver(1)).as("kept across the restart").isEqualTo(gap);
            assertThat(links.startedOver(2)).isEqualTo(other);
            links.rebuilt(1, 1_999); // started before the master heard the report: it stays
            links.rebuilt(2, 4_000); // started once it was heard: answered
            assertThat(links.startedOver(2)).isNull();
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            DedupLinks links = links(db);
            assertThat(links.startedOver(1)).as("a rebuild started before the report answers nothing").isEqualTo(gap);
            assertThat(links.startedOver(2)).as("the rebuild's answer survives the restart").isNull();
        }
    }

    @Test
    void removed_workerWithAMarkReAddedByName_newWorkerShowsNoOldMarkAndTheCatalogHoldsNoneAfterARestart() {
        StartOverMark gap = new StartOverMark(1_000, StartOverReason.EPOCH_GAP, 2_000);
        StartOverMark other = new StartOverMark(3_000, StartOverReason.OTHER_ID, 4_000);
        WorkerCapacity cap = new WorkerCapacity(2, 1L << 30, 1L << 40);
        long removedId;
        long readdedId;
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry registry = new WorkerRegistry(new ClusterStore(db), MembershipSettings.defaults(), Clock.systemUTC());
            DedupLinks links = links(db);
            WorkerRecord one = registry.register("w-one", TOKEN, "127.0.0.2:1", cap, "v");
            WorkerRecord two = registry.register("w-two", TOKEN, "127.0.0.3:1", cap, "v");
            links.startedOver(one.workerId(), gap);
            links.persist(one.workerId());
            links.startedOver(two.workerId(), other);
            links.persist(two.workerId());
            io.netty.channel.embedded.EmbeddedChannel ch = new io.netty.channel.embedded.EmbeddedChannel();
            DedupLink link = DedupFramesBadInputTest.masterLink(ch);
            links.add(one.workerId(), link);
            long call = link.nextId();
            link.call(call, new org.holdfast.common.protocol.DedupControl(call, org.holdfast.common.protocol.DedupControl.LOAD, 0));
            ch.writeInbound(DedupFramesBadInputTest.encoded(new org.holdfast.common.protocol.DedupDone(call,
                    new long[org.holdfast.common.protocol.DedupFrames.LOAD_FIELDS])));
            assertThat(links.indexReport(one.workerId())).as("its last index report, kept after its link ends").isNotNull();
            ch.finishAndReleaseAll();
            registry.disconnected(one.workerId(), one.epoch());

            registry.remove(one.workerId()); // what DELETE /api/v1/cluster/workers/{id} does, then:
            links.persist(one.workerId()); // the cluster lane's write of the report, late: it wrote the mark back
            links.removed(one.workerId());
            removedId = one.workerId();
            assertThat(links.startedOver(removedId)).as("dropped from memory").isNull();
            assertThat(links.indexReport(removedId)).as("its last link and index report too").isNull();
            assertThat(db.get(db.handle(MetadataDb.Column.CLUSTER), markKey(removedId))).as("no 's' + id key left").isNull();

            readdedId = registry.register("w-one", TOKEN, "127.0.0.2:2", cap, "v").workerId();
            assertThat(readdedId).as("ids are never handed out again").isNotEqualTo(removedId);
            assertThat(links.startedOver(readdedId)).as("the node re-added shows no old mark").isNull();
            assertThat(links.startedOver(two.workerId())).as("another worker's mark stays").isEqualTo(other);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(db.get(db.handle(MetadataDb.Column.CLUSTER), markKey(removedId))).isNull();
            assertThat(new ClusterStore(db).startOverMarks()).as("after a restart too").containsOnlyKeys(2L);
            DedupLinks links = links(db);
            assertThat(links.startedOver(removedId)).isNull();
            assertThat(links.startedOver(readdedId)).isNull();
        }
    }

    /** Worker {@code workerId}'s start-over mark key as docs/architecture.md lays it out: 's' + u32 id, big-endian. */
    private static byte[] markKey(long workerId) {
        return java.nio.ByteBuffer.allocate(5).put((byte) 's').putInt((int) workerId).array();
    }

    @Test
    void persist_markClearedInMemoryBeforeItsWrite_writesTheNewestStateOnly() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            DedupLinks links = links(db);
            links.startedOver(1, new StartOverMark(1_000, StartOverReason.NEW_MEMBERSHIP, 2_000));
            links.rebuilt(1, 3_000); // the rebuild's answer lands before the lane wrote the report
            links.persist(1); // the lane's write, late: it writes what holds now
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(links(db).startedOver(1)).isNull();
        }
    }

    @Test
    void dedupLinks_unreadableMarkAndMarkOfUnknownWorker_masterStartsAndTheRebuildDeletesTheUnreadableOne() {
        byte[] key1 = {'s', 0, 0, 0, 1};
        StartOverMark gap = new StartOverMark(5_000, StartOverReason.EPOCH_GAP, 6_000);
        try (MetadataDb db = MetadataDb.open(dir)) {
            new ClusterStore(db).put(new WorkerRecord(1, "w-one", 3, new PbnRange(10, 20), 1, 1));
            // a newer build's mark version (a downgrade), and a mark of a worker the catalog does not hold
            db.put(db.handle(MetadataDb.Column.CLUSTER), key1, new byte[] {2, 0, 0});
            new ClusterStore(db).putStartOverMark(99, gap);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            DedupLinks links = links(db); // a master that threw here would not start
            assertThat(links.startedOver(1)).as("the unreadable mark is left out").isNull();
            assertThat(links.startedOver(99)).isEqualTo(gap);
            links.rebuilt(1, 7_000);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(db.get(db.handle(MetadataDb.Column.CLUSTER), key1)).as("the rebuild deleted it").isNull();
            assertThat(new ClusterStore(db).workers()).hasSize(1);
        }
    }

    @Test
    void persist_reportedAgainAndAgain_oneKeyPerWorkerHoldingTheNewest() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            DedupLinks links = links(db);
            for (int i = 1; i <= 200; i++) { // a worker that reconnects in a loop, starting over each time
                links.startedOver(1, new StartOverMark(i, StartOverReason.EPOCH_GAP, 1_000 + i));
                links.persist(1);
            }
            int keys = 0;
            try (org.holdfast.server.store.CheckedIterator it = db.iterator(db.handle(MetadataDb.Column.CLUSTER))) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    keys++;
                }
            }
            assertThat(keys).as("the store grows by the workers, not by the reports").isEqualTo(1);
            assertThat(new ClusterStore(db).startOverMarks().get(1L).receivedAtMillis()).isEqualTo(1_200);
        }
    }

    @Test
    void catalogRestore_backupTakenWithMarks_restoredMasterListsThem() {
        StartOverMark gap = new StartOverMark(1_000, StartOverReason.EPOCH_GAP, 2_000);
        Path restored = dir.resolve("restored");
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             org.holdfast.server.store.CatalogBackups backups = org.holdfast.server.store.CatalogBackups.open(dir.resolve("backups"))) {
            new ClusterStore(db).put(new WorkerRecord(1, "w-one", 3, new PbnRange(10, 20), 1, 1));
            DedupLinks links = links(db);
            links.startedOver(1, gap);
            links.persist(1);
            int id = backups.create(db, "with a mark", 3).info().id();
            backups.restore(id, restored);
        }
        try (MetadataDb db = MetadataDb.open(restored)) {
            assertThat(links(db).startedOver(1)).isEqualTo(gap);
            assertThat(new ClusterStore(db).workers()).hasSize(1);
        }
    }
}
