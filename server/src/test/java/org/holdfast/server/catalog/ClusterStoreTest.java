package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.holdfast.server.cluster.PbnRange;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterStoreTest {
    @TempDir
    Path dir;

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
}
