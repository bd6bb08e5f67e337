package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** The start-up report when the catalog is gone but the data logs are not: it names catalog-restore. */
class StoreFailureAnalyzerTest {
    @TempDir
    Path dir;

    private DataStore.Settings settings() {
        return new DataStore.Settings(dir.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0);
    }

    @Test
    void analyze_catalogDeletedDataLogsKept_namesCatalogRestoreAndKeepsTheLogs() throws Exception {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = DataStore.open(settings(), db)) {
            byte[] b = new byte[4096];
            new Random(3).nextBytes(b);
            store.append(new byte[32], 0, b, 0, b.length, FormatVersions.CODEC_RAW, b.length);
            store.sync();
        }
        try (Stream<Path> s = Files.walk(dir.resolve("catalog"))) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        long logs;
        try (Stream<Path> s = Files.list(dir.resolve("data"))) {
            logs = s.count();
        }
        Throwable t;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            t = catchThrowable(() -> DataStore.open(settings(), db).close());
        }
        assertThat(t).isInstanceOf(CorruptDataException.class).hasMessageContaining("catalog (<data-dir>/catalog) was deleted")
                .hasMessageContaining("holdfast-server catalog-restore --data-dir <data-dir> --from");
        try (Stream<Path> s = Files.list(dir.resolve("data"))) {
            assertThat(s.count()).as("the data logs stay").isEqualTo(logs);
        }
        FailureAnalysis a = new StoreFailureAnalyzer().analyze(new RuntimeException("bean creation", t));
        assertThat(a.getAction()).contains("catalog-restore").contains("Back up the catalog, and recover a lost server")
                .doesNotContain("run the checker (fsck) before restarting");
    }
}
