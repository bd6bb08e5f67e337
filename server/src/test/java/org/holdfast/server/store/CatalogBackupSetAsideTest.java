package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Setting damaged shared files aside before a backup deletes the backups that held them, so it acts
 * only on what is proven damaged: a regular shared table whose bytes differ, never a directory a
 * garbled meta file names, never a file that merely could not be read.
 */
class CatalogBackupSetAsideTest {
    @TempDir
    Path tmp;

    static void commits(MetadataDb db, long from, long to) {
        for (long i = from; i <= to; i++) {
            try (MetadataBatch b = new MetadataBatch()) {
                db.put(b, MetadataDb.Column.META, ("k/" + i).getBytes(StandardCharsets.UTF_8), new byte[100]);
                db.write(b, false);
            }
        }
    }

    @Test
    void create_afterAGarbledMetaFileNamedTheSharedDirectory_movesNothing_theSoundBackupSurvives() throws Exception {
        Path dir = tmp.resolve("backups");
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir)) {
            commits(db, 1, 2000);
            backups.create(db, "", 7);
            commits(db, 2001, 2100);
            backups.create(db, "", 7);
            assertThat(backups.verify(1, true, n -> { }, 1L).sound()).isTrue();
            // backup 2's meta file garbled so that one line names the shared directory itself (count unchanged)
            Path meta = dir.resolve("meta").resolve("2");
            List<String> lines = Files.readAllLines(meta);
            int at = 0;
            while (!lines.get(at).startsWith("shared_checksum/")) {
                at++;
            }
            lines.set(at, "shared_checksum" + lines.get(at).substring(lines.get(at).indexOf(' ')));
            Files.write(meta, lines);
            CatalogBackups.Verification v = backups.verify(2, true, n -> { }, 2L);
            assertThat(v.sound()).as("a garbled meta file is damage").isFalse();

            commits(db, 2101, 2200);
            CatalogBackups.Created c = backups.create(db, "", 7);
            assertThat(c.setAside()).as("a directory is never set aside").isEmpty();
            assertThat(Files.isDirectory(dir.resolve("shared_checksum"))).isTrue();
            assertThat(backups.list()).extracting(CatalogBackups.Info::id).contains(1, 3);
            assertThat(backups.verify(1, true, n -> { }, 3L).sound()).as("the sound backup keeps its files").isTrue();
        }
    }

    @Test
    void parse_nameWithDotOrEmptyComponents_isRefused() throws Exception {
        Path dir = tmp.resolve("backups");
        Files.createDirectories(dir.resolve("meta"));
        for (String name : List.of("shared_checksum/.", "shared_checksum/", "shared_checksum//x.sst", "./shared/x.sst", "shared/x\\..")) {
            Files.writeString(dir.resolve("meta").resolve("1"), "1700000000\n5\n1\n" + name + " crc32 1\n");
            CatalogBackupCheck.Outcome o = CatalogBackupCheck.run(dir, 1, true, n -> { });
            assertThat(o.damagedFiles()).as(name).containsExactly("meta/1");
        }
    }

    @Test
    void files_sizeInANameTooLongForALong_isAnUnreadableMetaFile_notACrash() throws Exception {
        Path dir = tmp.resolve("backups");
        Files.createDirectories(dir.resolve("meta"));
        Files.writeString(dir.resolve("meta").resolve("1"), "1700000000\n5\n1\nshared_checksum/1_s2_" + "9".repeat(30)
                + ".sst crc32 1\n");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> CatalogBackupCheck.files(dir, 1))
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("meta file unreadable");
    }
}
