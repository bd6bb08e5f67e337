package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.TakeoverFence;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * catalog-restore's fence raise (S3Proxy, a RocksDB catalog on disk): a restored worker whose range
 * the bucket shows at a higher epoch than its fence gets that epoch, its PBN floor kept; a worker at
 * its fence's epoch, and a worker the restored registry does not hold, are left as they are.
 * End to end: {@code TakeoverAfterCatalogBackupTest} (slow).
 */
class RestoredTakeoverFencesTest {
    private static final long SIZE = 1L << 40;

    @TempDir
    Path tmp;

    private static WorkerRecord worker(long id, String node) {
        PbnRange r = new PbnRange(id * SIZE, (id + 1) * SIZE);
        return new WorkerRecord(id, node, 3, r, 1000, 2000, "0123456789abcdef");
    }

    @Test
    void raise_rangeTakenOverAfterTheBackup_fenceTakesTheBucketsEpoch_floorKept_othersUntouched() throws Exception {
        Path one = Files.writeString(tmp.resolve("one"), "x");
        try (S3ProxyFixture s3 = S3ProxyFixture.start(tmp.resolve("s3"));
             ObjectStore bucket = S3ObjectStore.open(s3.settings("r/"));
             MetadataDb db = MetadataDb.open(tmp.resolve("catalog"))) {
            ClusterStore cluster = new ClusterStore(db);
            cluster.put(worker(1, "a"));
            cluster.put(worker(2, "b"));
            long floor1 = SIZE + 4096;
            cluster.putTakeoverFence(1, new TakeoverFence(1, floor1), true);
            cluster.putTakeoverFence(2, new TakeoverFence(2, 0), true);
            bucket.putIfAbsent(WorkerKeys.space(1, 1) + "/logs/00000001", one);
            bucket.putIfAbsent(WorkerKeys.marker(1, 2), one); // a takeover after the backup
            bucket.putIfAbsent(WorkerKeys.marker(2, 2), one);
            bucket.putIfAbsent(WorkerKeys.marker(7, 3), one); // a worker the restored registry does not hold

            List<RestoredTakeoverFences.Raised> raised = RestoredTakeoverFences.raise(db, bucket);

            assertThat(raised).containsExactly(new RestoredTakeoverFences.Raised(1, 1, 2));
            assertThat(cluster.takeoverFences()).isEqualTo(Map.of(1L, new TakeoverFence(2, floor1), 2L, new TakeoverFence(2, 0)));
            assertThat(RestoredTakeoverFences.raise(db, bucket)).as("a second run: nothing left to raise").isEmpty();
        }
    }
}
