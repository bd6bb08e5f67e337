package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged catalog-backup files set aside are bounded: older than the days kept, or beyond the newest
 * few of one name, they go; a file a kept backup's record names stays, and nothing outside
 * holdfast-verify/damaged/ is deleted, through a link or otherwise. A verification the backup disk
 * refused to record still has the next backup set its damage aside.
 */
class DamagedFilesAsideTest {
    private static final long NOW = 1_800_000_000_000L;
    private static final long DAY = 86_400_000L;

    @TempDir
    Path tmp;

    private static Path touch(Path p) throws Exception {
        Files.createDirectories(p.getParent());
        Files.writeString(p, "x");
        return p;
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void prune_oldOnesAndOnesBeyondTheNewestPerName_go_namedOnesLinksAndForeignNamesStay() throws Exception {
        Path backups = tmp.resolve("backups");
        Path aside = DamagedFilesAside.dir(backups);
        touch(aside.resolve("1_a_9.sst." + (NOW - 8 * DAY)));
        for (int d = 1; d <= 4; d++) {
            touch(aside.resolve("2_b_9.sst." + (NOW - d * DAY)));
        }
        touch(aside.resolve("3_c_9.sst." + (NOW - 30 * DAY))); // a kept backup's record names it
        touch(aside.resolve("notes.txt"));
        Files.createDirectories(aside.resolve("4_d_9.sst." + (NOW - 30 * DAY)));
        Path outside = touch(tmp.resolve("elsewhere/5_e_9.sst." + (NOW - 30 * DAY)));
        Files.createSymbolicLink(aside.resolve("5_e_9.sst." + (NOW - 30 * DAY)), outside);
        Path sibling = touch(backups.resolve("holdfast-verify/6_f_9.sst." + (NOW - 30 * DAY)));

        List<String> deleted = DamagedFilesAside.prune(backups, Set.of("3_c_9.sst"), NOW);

        assertThat(deleted).containsExactly("1_a_9.sst." + (NOW - 8 * DAY), "2_b_9.sst." + (NOW - 4 * DAY));
        assertThat(names(aside)).containsExactly("2_b_9.sst." + (NOW - 3 * DAY), "2_b_9.sst." + (NOW - 2 * DAY),
                "2_b_9.sst." + (NOW - DAY), "3_c_9.sst." + (NOW - 30 * DAY), "4_d_9.sst." + (NOW - 30 * DAY),
                "5_e_9.sst." + (NOW - 30 * DAY), "notes.txt");
        assertThat(outside).as("a link is not followed").exists();
        assertThat(sibling).as("only damaged/ is pruned").exists();
    }

    @Test
    void prune_damagedDirectoryIsALink_deletesNothingThere() throws Exception {
        Path backups = tmp.resolve("backups");
        Path elsewhere = tmp.resolve("elsewhere");
        Path old = touch(elsewhere.resolve("1_a_9.sst." + (NOW - 30 * DAY)));
        Files.createDirectories(backups.resolve("holdfast-verify"));
        Files.createSymbolicLink(DamagedFilesAside.dir(backups), elsewhere);

        assertThat(DamagedFilesAside.prune(backups, Set.of(), NOW)).isEmpty();
        assertThat(old).exists();
    }

    @Test
    void create_afterADamagedBackup_setsItsTableAside_andDeletesOnlyExpiredSetAsideFiles() throws Exception {
        Path dir = tmp.resolve("backups");
        long now = System.currentTimeMillis();
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir)) {
            CatalogBackupSetAsideTest.commits(db, 1, 2000);
            backups.create(db, "", 7);
            String rotten = BackupFiles.rot(dir);
            assertThat(backups.verify(1, true, n -> { }, 1L).sound()).isFalse();
            Path aside = DamagedFilesAside.dir(dir);
            Path expired = touch(aside.resolve("9_x_9.sst." + (now - 8 * DAY)));
            Path recent = touch(aside.resolve("9_x_9.sst." + (now - DAY)));
            Path outside = touch(tmp.resolve("elsewhere/8_y_9.sst." + (now - 30 * DAY)));
            Files.createSymbolicLink(aside.resolve("8_y_9.sst." + (now - 30 * DAY)), outside);

            CatalogBackupSetAsideTest.commits(db, 2001, 2100);
            CatalogBackups.Created c = backups.create(db, "", 7);

            assertThat(c.setAside()).containsExactly(rotten);
            String table = Path.of(rotten).getFileName().toString();
            assertThat(names(aside)).as("the table just set aside stays for a look; the expired one went")
                    .hasSize(3).contains(recent.getFileName().toString(), "8_y_9.sst." + (now - 30 * DAY))
                    .anyMatch(n -> n.startsWith(table + "."));
            assertThat(expired).doesNotExist();
            assertThat(outside).exists();
            assertThat(backups.verify(c.info().id(), true, n -> { }, 2L).sound()).isTrue();
        }
    }

    @Test
    void create_afterAVerificationTheDiskRefusedToRecord_stillSetsTheDamagedTableAside() throws Exception {
        Path dir = tmp.resolve("backups");
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir)) {
            CatalogBackupSetAsideTest.commits(db, 1, 2000);
            backups.create(db, "", 7);
            assertThat(backups.verify(1, true, n -> { }, 1L).sound()).isTrue();
            CatalogBackupSetAsideTest.commits(db, 2001, 2100);
            backups.create(db, "", 7);
            String own = ownSharedTable(dir, 2, 1);
            BackupFiles.flip(dir.resolve(own));
            // the record cannot be written: its temporary name is taken by a directory (as a full disk refuses it)
            Files.createDirectories(dir.resolve("holdfast-verify/2.tmp"));
            CatalogBackups.Verification v = backups.verify(2, true, n -> { }, 2L);
            assertThat(v.sound()).isFalse();
            assertThat(dir.resolve("holdfast-verify/2")).as("not recorded").doesNotExist();
            assertThat(backups.verifications()).as("still known").containsKey(2);

            CatalogBackupSetAsideTest.commits(db, 2101, 2200);
            CatalogBackups.Created c = backups.create(db, "", 7);
            assertThat(c.setAside()).containsExactly(own);
            assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(1, 3);
            assertThat(backups.verify(3, true, n -> { }, 3L).sound()).isTrue();
        }
    }

    /** A shared table backup {@code id} holds and backup {@code older} does not. */
    static String ownSharedTable(Path dir, int id, int older) throws Exception {
        List<String> before = CatalogBackupCheck.files(dir, older).stream().map(CatalogBackupCheck.Listed::name).toList();
        return CatalogBackupCheck.files(dir, id).stream().map(CatalogBackupCheck.Listed::name)
                .filter(n -> n.startsWith("shared") && !before.contains(n)).findFirst().orElseThrow();
    }
}
