package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * catalog-restore as operators run it: its own JVM, where nothing loaded RocksDB's native library
 * before the tool opens the backups (in-process tests load it earlier and hid the failure).
 */
class CatalogRestoreToolProcessTest {
    @TempDir
    Path dir;

    @Test
    void main_freshJvmWithCatalogDeleted_restoresExit0() throws Exception {
        Path root = dir.resolve("data");
        try (MetadataDb db = MetadataDb.open(root.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(root.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0), db);
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            Random r = new Random(7);
            for (int i = 0; i < 8; i++) {
                byte[] b = new byte[4096];
                r.nextBytes(b);
                store.append(MessageDigest.getInstance("SHA-256").digest(b), 0, b, 0, b.length, FormatVersions.CODEC_RAW, b.length);
            }
            store.sync();
            backups.create(db, "", 7);
        }
        try (var s = Files.walk(root.resolve("catalog"))) {
            s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        }
        Path log = dir.resolve("tool.out");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), CatalogRestoreTool.class.getName(),
                "--data-dir", root.toString(), "--from", dir.resolve("backups").toString(), "--scratch-dir", dir.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the tool ends").isTrue();
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("result: restored").doesNotContain("UnsatisfiedLinkError");
        assertThat(new File(root.resolve("catalog").toString(), "CURRENT")).exists();
    }
}
