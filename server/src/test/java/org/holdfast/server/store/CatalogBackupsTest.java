package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Online catalog backups on a real RocksDB: one point in time under concurrent batches, incremental, kept, refused where they must be. */
class CatalogBackupsTest {
    @TempDir
    Path tmp;

    private static byte[] key(long i) {
        return ("k/" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static void commit(MetadataDb db, long i, byte[] value) {
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, MetadataDb.Column.META, key(i), value);
            db.putMetaLong(b, "count", i);
            db.write(b, false);
        }
    }

    private static void commits(MetadataDb db, int n) {
        for (long i = 1; i <= n; i++) {
            commit(db, i, new byte[100]);
        }
    }

    @Test
    void create_whileBatchesCommit_restoresOnePointInTime() throws Exception {
        byte[] value = new byte[200];
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            for (long i = 1; i <= 2000; i++) {
                commit(db, i, value);
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong written = new AtomicLong(2000);
            Thread writer = new Thread(() -> {
                while (!stop.get()) {
                    commit(db, written.incrementAndGet(), value);
                }
            });
            writer.start();
            CatalogBackups.Info made;
            try {
                Thread.sleep(20);
                made = backups.create(db, "snapshots=3;newest=7", 7).info();
                Thread.sleep(20);
            } finally {
                stop.set(true);
                writer.join();
            }
            assertThat(made.id()).isEqualTo(1);
            assertThat(made.metadata()).isEqualTo("snapshots=3;newest=7");
            assertThat(written.get()).as("batches went on during and after the backup").isGreaterThan(2000);

            Path restored = tmp.resolve("restored");
            backups.restore(1, restored);
            try (MetadataDb r = MetadataDb.open(restored)) {
                long count = r.metaLong("count", -1);
                assertThat(count).isGreaterThanOrEqualTo(2000).isLessThan(written.get());
                for (long i = 1; i <= count; i++) {
                    assertThat(r.get(MetadataDb.Column.META, key(i))).as("key " + i + " of " + count).isNotNull();
                }
                assertThat(r.get(MetadataDb.Column.META, key(count + 1))).as("nothing past the point in time").isNull();
            }
        }
    }

    @Test
    void create_second_copiesOnlyNewTables_andKeepPurgesOldest() {
        Random rnd = new Random(5);
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            for (long i = 1; i <= 20_000; i++) {
                byte[] v = new byte[100];
                rnd.nextBytes(v); // incompressible: the tables hold about 2 MB
                commit(db, i, v);
            }
            long first = backups.create(db, "a", 7).bytesCopied();
            assertThat(first).isEqualTo(backups.bytesOnDisk());
            commit(db, 20_001, new byte[10]);
            CatalogBackups.Created created = backups.create(db, "b", 7);
            CatalogBackups.Info second = created.info();
            long grew = backups.bytesOnDisk() - first;
            assertThat(created.bytesCopied()).isEqualTo(grew);
            assertThat(second.bytes()).as("the second backup holds every table").isGreaterThan(first / 2);
            assertThat(grew).as("but copies only the new ones").isLessThan(first / 10);
            assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(1, 2);

            CatalogBackups.Info third = backups.create(db, "c", 1).info();
            assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(third.id());
            assertThat(backups.bytesOnDisk()).as("purged backups' unshared files are gone").isLessThan(first + grew * 3);
        }
    }

    @Test
    void require_unknownId_namesTheOnesThereAre() {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            assertThatThrownBy(() -> backups.require(null)).isInstanceOf(UnknownCatalogBackupException.class).hasMessageContaining("holds no");
            backups.create(db, "", 7);
            assertThat(backups.require(null).id()).isEqualTo(1);
            assertThatThrownBy(() -> backups.require(9)).isInstanceOf(UnknownCatalogBackupException.class)
                    .hasMessageContaining("no catalog backup 9").hasMessageContaining("[1]");
            assertThatThrownBy(() -> backups.restore(9, tmp.resolve("r"))).isInstanceOf(UnknownCatalogBackupException.class);
            assertThat(tmp.resolve("r")).doesNotExist();
        }
    }

    @Test
    void restore_intoNonEmptyDirectory_refusedAndLeavesItAlone() throws Exception {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            backups.create(db, "", 7);
            Path target = Files.createDirectories(tmp.resolve("busy"));
            Files.writeString(target.resolve("keep.txt"), "mine");
            assertThatThrownBy(() -> backups.restore(1, target)).hasMessageContaining("not empty").hasMessageContaining("move it aside");
            assertThat(Files.list(target).toList()).containsExactly(target.resolve("keep.txt"));
        }
    }

    @Test
    void openBeside_insideDataDirectory_refusedWithTheReason_evenThroughALink() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        assertThatThrownBy(() -> CatalogBackups.openBeside(data, data.resolve("backups")))
                .isInstanceOf(StoreException.class).hasMessageContaining("inside the data directory")
                .hasMessageContaining("another disk");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), data);
        assertThatThrownBy(() -> CatalogBackups.openBeside(data, link.resolve("b"))).hasMessageContaining("inside the data directory");
        assertThat(data.resolve("backups")).doesNotExist();
        try (CatalogBackups ok = CatalogBackups.openBeside(data, tmp.resolve("elsewhere"))) {
            assertThat(ok.list()).isEqualTo(List.of());
        }
    }

    @Test
    void open_newDirectory_isOwnerOnly_forItHoldsPasswordAndTokenHashes() throws Exception {
        Path target = tmp.resolve("fresh-backups");
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(target)) {
            backups.create(db, "", 7);
        }
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(target)))
                .as("a new catalog backup directory must be 0700 like the data directory").isEqualTo("rwx------");
    }

    @Test
    void restore_damagedBackupFile_blamesTheBackup_notTheCatalog() throws Exception {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            for (long i = 1; i <= 2000; i++) {
                commit(db, i, new byte[100]);
            }
            backups.create(db, "", 7);
            Path sst;
            try (var s = Files.walk(tmp.resolve("backups/shared_checksum"))) {
                sst = s.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow();
            }
            byte[] b = Files.readAllBytes(sst);
            b[b.length / 3] ^= 0x55; // bit rot on the backup disk
            Files.write(sst, b);
            assertThatThrownBy(() -> backups.restore(1, tmp.resolve("restored")))
                    .as("the live catalog is fine: the operator must be sent to another backup, not told to replace the catalog")
                    .hasMessageContaining("backup 1").hasMessageNotContaining(MetadataDb.REPAIR_HINT);
        }
    }

    @Test
    void create_afterClose_refusedClearly_notOnTheFreedEngine() {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"))) {
            CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"));
            backups.close(); // the server stopping, a second backup still queued in the job lane
            assertThatThrownBy(() -> backups.create(db, "", 7)).isInstanceOf(StoreException.class).hasMessageContaining("closed");
            assertThatThrownBy(backups::list).isInstanceOf(StoreException.class);
        }
    }

    @Test
    void verify_soundBackup_recordsIt_withChecksumsOfEveryByte() {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            commits(db, 2000);
            CatalogBackups.Info made = backups.create(db, "", 7).info();
            AtomicLong read = new AtomicLong();
            CatalogBackups.Verification v = backups.verify(made.id(), true, read::addAndGet, 1234L);
            assertThat(v.sound()).as(v.toString()).isTrue();
            assertThat(v.files()).isEqualTo(made.files());
            assertThat(v.bytes()).isEqualTo(made.bytes());
            assertThat(read.get()).as("every byte read for its checksum").isEqualTo(made.bytes());
            assertThat(backups.verifications()).containsEntry(made.id(), v);
        }
    }

    @Test
    void verify_flippedByteInSharedTable_reportsTheFile_sizesAloneDoNot_andTheRecordSurvivesReopening() throws Exception {
        CatalogBackups.Verification v;
        String rotten;
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            commits(db, 2000);
            backups.create(db, "", 7);
            commit(db, 2001, new byte[100]);
            backups.create(db, "", 7);
            rotten = BackupFiles.rot(tmp.resolve("backups"));
            assertThat(backups.verify(2, false, n -> { }, 1L).sound()).as("a flipped bit keeps the size").isTrue();
            v = backups.verify(2, true, n -> { }, 2L);
            assertThat(v.sound()).isFalse();
            assertThat(v.damaged()).isEqualTo(1);
            assertThat(v.damagedFiles()).containsExactly(rotten);
            assertThat(v.problems().get(0)).contains(rotten).contains("CRC32C");
            assertThat(backups.olderWithout(2, v.damagedFiles())).as("backup 1 shares the rotten table").isNull();
        }
        try (CatalogBackups again = CatalogBackups.open(tmp.resolve("backups"))) {
            assertThat(again.verifications().get(2)).isEqualTo(v);
            assertThat(again.list()).as("the engine ignores the records beside it").hasSize(2);
        }
    }

    @Test
    void verify_missingOrTruncatedFile_reportedWithoutChecksums() throws Exception {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"))) {
            commits(db, 2000);
            backups.create(db, "", 7);
            Path sst = tmp.resolve("backups").resolve(BackupFiles.firstSharedTable(tmp.resolve("backups")));
            byte[] b = Files.readAllBytes(sst);
            Files.write(sst, java.util.Arrays.copyOf(b, b.length - 1));
            CatalogBackups.Verification v = backups.verify(1, false, n -> { }, 1L);
            assertThat(v.problems()).singleElement().asString().contains("bytes, the backup recorded " + b.length);
            Files.delete(sst);
            assertThat(backups.verify(1, false, n -> { }, 1L).problems()).singleElement().asString().endsWith("missing");
        }
    }
}
