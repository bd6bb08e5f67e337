package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backups that verified damaged are bounded by keep as well: beyond the newest keep they go, while
 * sound and never verified ones stay (a damaged backup never pushes the last sound one out).
 */
class CatalogBackupPurgeDamagedTest {
    @TempDir
    Path tmp;

    @Test
    void purgeDamaged_deletesOnlyDamagedOnesBeyondKeep_theSoundOneAndTheUnverifiedOneStay() throws Exception {
        Path dir = tmp.resolve("backups");
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir)) {
            for (int n = 1; n <= 5; n++) {
                try (MetadataBatch b = new MetadataBatch()) {
                    db.put(b, MetadataDb.Column.META, ("k/" + n).getBytes(StandardCharsets.UTF_8), new byte[100]);
                    db.write(b, true);
                }
                backups.create(db, "", 7);
            }
            assertThat(backups.verify(1, true, x -> { }, 1L).sound()).isTrue();
            // 2 stays never verified; 3, 4 and 5 verify damaged (a file of their own rotted)
            for (int id = 3; id <= 5; id++) {
                String prefix = "private/" + id + "/MANIFEST";
                String own = Files.readAllLines(dir.resolve("meta/" + id)).stream().map(l -> l.split(" ")[0])
                        .filter(n -> n.startsWith(prefix)).findFirst().orElseThrow();
                BackupFiles.flip(dir.resolve(own));
                assertThat(backups.verify(id, true, x -> { }, 2L).sound()).isFalse();
            }
            assertThat(backups.purgeDamaged(2)).containsExactly(3);
            assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(1, 2, 4, 5);
            assertThat(backups.purgeDamaged(1)).containsExactly(4);
            assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(1, 2, 5);
            assertThat(backups.verifications()).containsOnlyKeys(1, 5);
            assertThat(backups.verify(1, true, x -> { }, 3L).sound()).as("the sound one keeps every file").isTrue();
        }
    }
}
