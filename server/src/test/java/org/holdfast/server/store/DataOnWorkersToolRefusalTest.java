package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An offline GC tool refused on a data=workers master says what checks such a cluster instead (the
 * online fsck of the workers' counts, worker-fsck, verify), not only what it cannot do.
 */
class DataOnWorkersToolRefusalTest {
    @TempDir
    Path dir;

    @Test
    void refuseDataOnWorkers_namesTheChecksThatDoWork_andLeavesAStandaloneCatalogAlone() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThatCode(() -> FormatVersions.refuseDataOnWorkers(db, "fsck")).as("standalone").doesNotThrowAnyException();
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, FormatVersions.META_CLUSTER_DATA_MODE, FormatVersions.CLUSTER_DATA_ON_WORKERS);
                db.write(b, true);
            }
            assertThatThrownBy(() -> FormatVersions.refuseDataOnWorkers(db, "fsck")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("nothing was changed").hasMessageContaining("POST /api/v1/gc/fsck")
                    .hasMessageContaining("worker-fsck").hasMessageContaining("POST /api/v1/verify");
        }
    }
}
