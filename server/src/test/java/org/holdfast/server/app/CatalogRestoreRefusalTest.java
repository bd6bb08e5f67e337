package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.Random;
import org.holdfast.server.store.BackupFiles;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** catalog-restore of another appliance's catalog backup: refused, and this data directory's own catalog stays where it was. */
class CatalogRestoreRefusalTest {
    @TempDir
    Path dir;

    /** A data directory with {@code n} raw blocks of {@code seed}: the same PBNs and offsets for every seed. */
    private static void store(Path root, long seed, int n) throws Exception {
        try (MetadataDb db = MetadataDb.open(root.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(root.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0), db)) {
            Random r = new Random(seed);
            for (int i = 0; i < n; i++) {
                byte[] b = new byte[4096];
                r.nextBytes(b);
                store.append(MessageDigest.getInstance("SHA-256").digest(b), 0, b, 0, b.length, FormatVersions.CODEC_RAW, b.length);
            }
            store.sync();
        }
    }

    @Test
    void run_backupOfAnotherStore_exit3_ownCatalogPutBack() throws Exception {
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        store(a, 1, 12);
        store(b, 2, 12);
        try (MetadataDb db = MetadataDb.open(a.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            backups.create(db, "", 7);
        }
        byte[] ownLocations;
        try (MetadataDb db = MetadataDb.open(b.resolve("catalog"))) {
            ownLocations = db.get(MetadataDb.Column.META, FormatVersions.META_DURABLE_POINT.getBytes(StandardCharsets.UTF_8));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = CatalogRestoreTool.run(new String[] {"--data-dir", b.toString(), "--from", dir.resolve("backups").toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        String e = err.toString(StandardCharsets.UTF_8);
        assertThat(code).as(out + e).isEqualTo(3);
        assertThat(e).contains("another store").contains("nothing was changed");
        try (var s = Files.list(b)) {
            assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("catalog.before-restore"));
        }
        try (MetadataDb db = MetadataDb.open(b.resolve("catalog"))) {
            assertThat(db.get(MetadataDb.Column.META, FormatVersions.META_DURABLE_POINT.getBytes(StandardCharsets.UTF_8)))
                    .as("B's own catalog is back").isEqualTo(ownLocations);
        }
    }

    @Test
    void run_backupIdNotExactlyANumber_exit2_nothingRestored() throws Exception {
        Path b = dir.resolve("b");
        store(b, 2, 4);
        try (MetadataDb db = MetadataDb.open(b.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            backups.create(db, "", 7);
        }
        for (String bad : new String[] {"+1", " 1", "01", "1 ", "0", "-1", "99999999999"}) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = CatalogRestoreTool.run(new String[] {"--data-dir", b.toString(), "--from", dir.resolve("backups").toString(),
                    "--backup-id", bad}, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
            assertThat(code).as("--backup-id '%s'", bad).isEqualTo(2);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("'--backup-id'", "a backup id is a positive number", "got '" + bad + "'");
        }
        try (var s = Files.list(b)) {
            assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("catalog.before-restore"));
        }
    }

    @Test
    void run_backupWithAFlippedByte_refusedBeforeAnythingMoves_namesAnOlderBackupToTry() throws Exception {
        Path b = dir.resolve("b");
        Path backupDir = dir.resolve("backups");
        store(b, 2, 12);
        backUp(b, backupDir, 2);
        // the table only backup 2 holds: rot it on the backup disk
        String onlyInSecond = fileOnlyIn(backupDir, 2, "shared_checksum/", 1);
        BackupFiles.flip(backupDir.resolve(onlyInSecond));
        org.holdfast.server.store.DataDirectory.open(b).close(); // its lock file, as a stopped server leaves it
        java.util.Map<String, String> before = BackupFiles.digests(b);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String e = refused(b, backupDir);
        assertThat(e).contains("catalog backup 2 is damaged").contains(onlyInSecond).contains("--backup-id 1")
                .contains("nothing was changed");
        assertThat(BackupFiles.digests(b)).as("the data directory, byte for byte").isEqualTo(before);
        try (CatalogBackups backups = CatalogBackups.open(backupDir)) {
            assertThat(backups.verifications().get(2).sound()).as("the refusal is recorded with the backup").isFalse();
        }

        // the backup it names restores
        int code = CatalogRestoreTool.run(new String[] {"--data-dir", b.toString(), "--from", backupDir.toString(), "--backup-id", "1"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        assertThat(code).as(out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8)).isZero();
    }

    @Test
    void run_damagedBackup_namesOnlyAnOlderBackupThatVerifiesSound_notOneWithDamageOfItsOwn() throws Exception {
        Path b = dir.resolve("b");
        Path backupDir = dir.resolve("backups");
        store(b, 2, 12);
        backUp(b, backupDir, 3);
        // backup 3's own table rots, and so does a file private to backup 2
        BackupFiles.flip(backupDir.resolve(fileOnlyIn(backupDir, 3, "shared_checksum/", 2)));
        BackupFiles.flip(backupDir.resolve(fileOnlyIn(backupDir, 2, "private/2/MANIFEST", 1)));
        org.holdfast.server.store.DataDirectory.open(b).close();

        String e = refused(b, backupDir);
        assertThat(e).contains("catalog backup 3 is damaged").doesNotContain("--backup-id 2").contains("--backup-id 1")
                .contains("nothing was changed");
    }

    /** Takes {@code n} backups of the catalog in {@code dataDir}, each after a change to it (so each holds a table of its own). */
    private static void backUp(Path dataDir, Path backupDir, int n) {
        try (MetadataDb db = MetadataDb.open(dataDir.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(backupDir)) {
            for (int i = 1; i <= n; i++) {
                try (org.holdfast.server.store.MetadataBatch batch = new org.holdfast.server.store.MetadataBatch()) {
                    db.putMetaLong(batch, "before-backup-" + i, i);
                    db.write(batch, true);
                }
                backups.create(db, "", 7);
            }
        }
    }

    /** A file named {@code prefix}... that backup {@code id} lists and backup {@code other} does not. */
    private static String fileOnlyIn(Path backupDir, int id, String prefix, int other) throws Exception {
        String others = Files.readString(backupDir.resolve("meta/" + other));
        return Files.readAllLines(backupDir.resolve("meta/" + id)).stream().map(l -> l.split(" ")[0])
                .filter(n -> n.startsWith(prefix) && !others.contains(n)).findFirst().orElseThrow();
    }

    /** Runs catalog-restore of the newest backup into {@code dataDir}, asserting it is refused (exit 3); returns what it said. */
    private static String refused(Path dataDir, Path backupDir) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = CatalogRestoreTool.run(new String[] {"--data-dir", dataDir.toString(), "--from", backupDir.toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        String e = err.toString(StandardCharsets.UTF_8);
        assertThat(code).as(out + e).isEqualTo(3);
        return e;
    }
}
