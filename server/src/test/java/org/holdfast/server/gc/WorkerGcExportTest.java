package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The export's refusals that need no cluster: a server whose blocks are its own, and bad arguments (nothing written). */
class WorkerGcExportTest {
    @TempDir
    Path dir;

    private int run(ByteArrayOutputStream err, String... args) {
        return GcRebuildToolAccess.run(args, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
    }

    @Test
    void exportTool_standaloneServer_exit3_noFile() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("data").resolve("catalog"))) {
            assertThat(db.metaLong(FormatVersions.META_CLUSTER_DATA_MODE, 0)).as("a standalone server's catalog").isZero();
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        int code = run(err, "--data-dir", dir.resolve("data").toString(), "--worker", "1", "--out", dir.resolve("w1.counts").toString());

        assertThat(code).isEqualTo(3);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("not a master with holdfast.cluster.data=workers");
        assertThat(dir.resolve("w1.counts")).doesNotExist();
        assertThat(dir.resolve("w1.counts.partial")).doesNotExist();
    }

    @Test
    void exportTool_workerWithoutOutOrBadId_exit2() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        assertThat(run(err, "--data-dir", dir.toString(), "--worker", "1")).isEqualTo(2);
        assertThat(run(err, "--data-dir", dir.toString(), "--worker", "zero", "--out", dir.resolve("x").toString())).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--worker and --out go together", "'--worker'", "not a worker id");
    }
}
