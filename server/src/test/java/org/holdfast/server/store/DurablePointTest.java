package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A store whose data logs lost bytes or files underneath it refuses to open and changes nothing. */
class DurablePointTest {
    @TempDir
    Path dir;

    private DataStore.Settings settings() {
        return new DataStore.Settings(dir.resolve("data"), 256L << 20, FsyncPolicy.COMMIT, 16, 0);
    }

    /** Stores two blocks, syncs and closes; returns the active log's path. */
    private Path storeTwoBlocks() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = DataStore.open(settings(), db)) {
            for (int i = 0; i < 2; i++) {
                byte[] b = new byte[4096];
                new Random(i).nextBytes(b);
                byte[] fp = new byte[32];
                new Random(~i).nextBytes(fp);
                store.append(fp, 0, b, 0, b.length, FormatVersions.CODEC_RAW, b.length);
            }
            store.sync();
            return dir.resolve("data").resolve(DataLog.fileName(store.stats().activeLogId()));
        }
    }

    @Test
    void open_activeLogShorterThanDurablePoint_refusesAndKeepsTheLog() throws Exception {
        Path log = storeTwoBlocks();
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "rw")) {
            f.setLength(f.length() - 100);
        }
        byte[] before = Files.readAllBytes(log);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThatThrownBy(() -> DataStore.open(settings(), db))
                    .isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("data was lost underneath the store");
            assertThatThrownBy(() -> DataStore.openReadOnly(dir.resolve("data"), db))
                    .isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("data was lost underneath the store");
        }
        assertThat(Arrays.equals(Files.readAllBytes(log), before)).as("the shortened log is left as it was").isTrue();
    }

    @Test
    void open_activeLogMissing_refusesNamingIt() throws Exception {
        Path log = storeTwoBlocks();
        Files.delete(log);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThatThrownBy(() -> DataStore.open(settings(), db))
                    .isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("the durable point names a data log that is missing")
                    .hasMessageContaining(log.getFileName().toString());
        }
        assertThat(dir.resolve("data")).isDirectoryNotContaining(p -> p.getFileName().toString().startsWith("data-"));
    }

    @Test
    void openReadOnly_catalogWithoutDurablePoint_refuses() throws Exception {
        Files.createDirectories(dir.resolve("data"));
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThatThrownBy(() -> DataStore.openReadOnly(dir.resolve("data"), db))
                    .isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("the catalog has no durable point");
        }
    }

    @Test
    void durablePoint_writeThenRead_roundTrips() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThat(DurablePoint.read(db, "data-store")).isNull();
            try (MetadataBatch b = new MetadataBatch()) {
                new DurablePoint(7, 123_456_789_012L).write(db, b);
            }
            assertThat(DurablePoint.read(db, "data-store")).isEqualTo(new DurablePoint(7, 123_456_789_012L));
        }
    }
}
