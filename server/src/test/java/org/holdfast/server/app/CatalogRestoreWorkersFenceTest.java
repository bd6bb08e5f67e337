package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.gc.RestoredWorkerCounts;
import org.holdfast.server.gc.WorkerCountsFences;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * catalog-restore of a data=workers master that fails after the catalog is in place (here: the data
 * store's part refuses it) leaves the restored catalog there: it must be fenced already, or a master
 * started on it would have its workers sweep on counts that predate it.
 */
class CatalogRestoreWorkersFenceTest {
    @TempDir
    Path dir;

    @Test
    void run_failsAfterTheCatalogIsRestored_theWorkersAreFencedAlready() {
        Path root = dir.resolve("master");
        PbnRange w1 = new PbnRange(1L << 48, (1L << 48) + (1L << 32));
        try (MetadataDb db = MetadataDb.open(root.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            new ClusterStore(db).put(new WorkerRecord(1, "node-a", 1, w1, 1L, 1L, ""));
            try (MetadataBatch b = new MetadataBatch()) {
                // no data store durable point: the store's part of the restore fails after the catalog is restored
                db.putMetaLong(b, FormatVersions.META_CLUSTER_DATA_MODE, FormatVersions.CLUSTER_DATA_ON_WORKERS);
                db.write(b, true);
            }
            backups.create(db, "", 7);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = CatalogRestoreTool.run(new String[] {"--data-dir", root.toString(), "--from", dir.resolve("backups").toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        String said = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);

        assertThat(code).as(said).isEqualTo(3);
        assertThat(said).contains("failed after the catalog was restored");
        try (MetadataDb db = MetadataDb.open(root.resolve("catalog"))) {
            assertThat(new WorkerCountsFences(db).sweepRefusal(1)).as("the restored catalog left in place is fenced").isNotNull();
            assertThat(new ClusterStore(db).highestRemovedId()).isEqualTo(1 + RestoredWorkerCounts.IDS_SKIPPED);
        }
    }
}
