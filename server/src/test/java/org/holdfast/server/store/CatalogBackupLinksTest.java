package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A symbolic link planted in a catalog backup directory (as a backup file, as holdfast-verify, as its
 * damaged/ or an entry there, as one of the engine's directories) never makes a verification, a
 * backup's set-aside, its pruning or a purge move or delete a file outside the backup directory.
 */
class CatalogBackupLinksTest {
    private static final long DAY = 86_400_000L;

    @TempDir
    Path tmp;
    @TempDir
    Path outside;
    private Path dir;
    private MetadataDb db;
    private CatalogBackups backups;

    /** A catalog with one backup in {@code tmp/backups}. */
    @BeforeEach
    void oneBackup() {
        dir = tmp.resolve("backups");
        db = MetadataDb.open(tmp.resolve("catalog"));
        backups = CatalogBackups.open(dir);
        CatalogBackupSetAsideTest.commits(db, 1, 2000);
        backups.create(db, "", 7);
    }

    @AfterEach
    void close() {
        backups.close();
        db.close();
    }

    private Path outsideFile(String name) throws Exception {
        Path p = outside.resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(p, "not a catalog backup file: " + name);
        return p;
    }

    @Test
    void createAndPurge_damagedSharedTableIsALinkToAFileOutside_leaveThatFileAlone() throws Exception {
        String table = BackupFiles.firstSharedTable(dir);
        Path victim = outsideFile("precious.sst");
        Files.delete(dir.resolve(table));
        Files.createSymbolicLink(dir.resolve(table), victim);
        Map<String, String> before = BackupFiles.digests(outside);

        assertThat(backups.verify(1, true, n -> { }, 1L).sound()).as("the link's target is not the table").isFalse();
        CatalogBackupSetAsideTest.commits(db, 2001, 2100);
        CatalogBackups.Created c = backups.create(db, "", 7);
        backups.purge(1);

        assertThat(c.setAside()).as("a link is not a damaged file of ours to move").doesNotContain(table);
        assertThat(BackupFiles.digests(outside)).isEqualTo(before);
        assertThat(Files.exists(DamagedFilesAside.dir(dir).resolve("precious.sst"))).isFalse();
    }

    @Test
    void verifyAndCreate_holdfastVerifyIsALink_writeNothingThereAndRefuseNamingTheLink() throws Exception {
        Path elsewhere = outside.resolve("verify");
        outsideFile("verify/1");
        outsideFile("verify/99");
        outsideFile("verify/notes.txt");
        outsideFile("verify/damaged/1_a_9.sst." + (System.currentTimeMillis() - 30 * DAY));
        Files.createSymbolicLink(dir.resolve(CatalogBackupVerdicts.DIR), elsewhere);
        Map<String, String> before = BackupFiles.digests(outside);

        assertThatThrownBy(() -> backups.verify(1, true, n -> { }, 1L)).isInstanceOf(StoreException.class)
                .hasMessageContaining("holdfast-verify is a symbolic link");
        CatalogBackupSetAsideTest.commits(db, 2001, 2100);
        assertThatThrownBy(() -> backups.create(db, "", 1)).isInstanceOf(StoreException.class)
                .hasMessageContaining("holdfast-verify is a symbolic link").hasMessageContaining("Remove the link");
        assertThatThrownBy(() -> backups.purge(1)).isInstanceOf(StoreException.class);

        assertThat(BackupFiles.digests(outside)).isEqualTo(before);
        assertThat(backups.list()).as("nothing deleted").hasSize(1);
    }

    @Test
    void create_damagedDirOrItsEntriesAreLinks_pruneDeletesNothingOutside() throws Exception {
        long old = System.currentTimeMillis() - 30 * DAY;
        Path entryTarget = outsideFile("entry.sst");
        Files.createDirectories(DamagedFilesAside.dir(dir));
        Files.createSymbolicLink(DamagedFilesAside.dir(dir).resolve("2_b_9.sst." + old), entryTarget);
        Path tmpTarget = outsideFile("record.tmp");
        Files.createSymbolicLink(dir.resolve(CatalogBackupVerdicts.DIR).resolve("1.tmp"), tmpTarget);
        Map<String, String> before = BackupFiles.digests(outside);

        backups.verify(1, true, n -> { }, 1L); // its record's temporary name is a link: not written through it
        CatalogBackupSetAsideTest.commits(db, 2001, 2100);
        backups.create(db, "", 1);
        assertThat(BackupFiles.digests(outside)).as("entries that are links").isEqualTo(before);

        Path asideDir = outside.resolve("aside");
        outsideFile("aside/3_c_9.sst." + old);
        Files.delete(DamagedFilesAside.dir(dir).resolve("2_b_9.sst." + old));
        Files.delete(DamagedFilesAside.dir(dir));
        Files.createSymbolicLink(DamagedFilesAside.dir(dir), asideDir);
        Map<String, String> withAside = BackupFiles.digests(outside);
        CatalogBackupSetAsideTest.commits(db, 2101, 2200);
        assertThatThrownBy(() -> backups.create(db, "", 1)).isInstanceOf(StoreException.class)
                .hasMessageContaining("damaged is a symbolic link");
        assertThat(BackupFiles.digests(outside)).as("damaged/ itself a link").isEqualTo(withAside);
    }

    @Test
    void openAndPurge_engineDirectoryIsALink_refuseUntilItIsGoneAndDeleteNothingOutside() throws Exception {
        CatalogBackupSetAsideTest.commits(db, 2001, 2100);
        backups.create(db, "", 7);
        // the shared tables now live outside, behind a link; backup 1's own ones would go with a purge
        Path moved = outside.resolve("shared_checksum");
        Files.move(dir.resolve("shared_checksum"), moved);
        Files.createSymbolicLink(dir.resolve("shared_checksum"), moved);
        Map<String, String> before = BackupFiles.digests(outside);

        assertThatThrownBy(() -> backups.purge(1)).isInstanceOf(StoreException.class)
                .hasMessageContaining("shared_checksum is a symbolic link");
        assertThatThrownBy(() -> backups.verify(1, true, n -> { }, 1L)).as("the engine open, a link planted since")
                .isInstanceOf(StoreException.class).hasMessageContaining("shared_checksum is a symbolic link");
        assertThat(BackupFiles.digests(outside)).isEqualTo(before);
        backups.close();
        // opening does not refuse (the server starts); the engine, whose open deletes, waits for the link to go
        try (CatalogBackups reopened = CatalogBackups.open(dir)) {
            assertThat(reopened.linkProblem()).contains("shared_checksum is a symbolic link").contains("Remove the link");
            assertThatThrownBy(reopened::list).isInstanceOf(StoreException.class)
                    .hasMessageContaining("shared_checksum is a symbolic link");
            assertThatThrownBy(() -> reopened.create(db, "", 1)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("shared_checksum is a symbolic link");
            assertThat(BackupFiles.digests(outside)).isEqualTo(before);

            Files.delete(dir.resolve("shared_checksum"));
            Files.move(moved, dir.resolve("shared_checksum"));
            assertThat(reopened.linkProblem()).isNull();
            assertThat(reopened.list()).as("opened once the link is gone, without a restart").hasSize(2);
        }
    }

    @Test
    void requireListed_engineWaitingForALink_namesTheLink_andFindsTheBackupOnceItIsGone() throws Exception {
        backups.close();
        Files.createSymbolicLink(dir.resolve(CatalogBackupVerdicts.DIR), Files.createDirectories(outside.resolve("verify")));
        try (CatalogBackups reopened = CatalogBackups.open(dir)) {
            // what a verification request checks before it queues: not "holds no catalog backup"
            assertThatThrownBy(() -> reopened.requireListed(1)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("holdfast-verify is a symbolic link");
            assertThat(reopened.verifications()).as("the health check's view, without opening").isEmpty();
            Files.delete(dir.resolve(CatalogBackupVerdicts.DIR));
            assertThat(reopened.requireListed(1).id()).as("the first request after the link is gone finds the backup").isEqualTo(1);
        }
    }
}
