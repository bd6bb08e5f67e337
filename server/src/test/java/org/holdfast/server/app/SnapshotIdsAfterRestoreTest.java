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
import java.util.stream.Stream;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** After catalog-restore a lost snapshot's id (volume@sequence) is not handed out again; the restored snapshots keep theirs. */
class SnapshotIdsAfterRestoreTest {
    private static final VolumeId VM = new VolumeId("vm01");
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private static SnapshotRecord commit(Catalog catalog, long parent) {
        return new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC())
                .commit(new SnapshotCommit.Request(VM, BS, 4L * BS, parent, new SessionMap(4), 4L * BS, 0, 0, 0)).snapshot();
    }

    /** A catalog of a store that holds one block (the restore needs its durable point); (data logs in {@code data}). */
    private static void storeOneBlock(MetadataDb db, Path data) throws Exception {
        try (DataStore store = DataStore.open(new DataStore.Settings(data, 64L << 10, FsyncPolicy.COMMIT, 16, 0), db)) {
            byte[] b = new byte[BS];
            new Random(1).nextBytes(b);
            store.append(MessageDigest.getInstance("SHA-256").digest(b), 0, b, 0, b.length, FormatVersions.CODEC_RAW, b.length);
            store.sync();
        }
    }

    private static void copyLogs(Path from, Path to) throws Exception {
        Files.createDirectories(to);
        try (Stream<Path> logs = Files.list(from)) {
            for (Path log : logs.filter(p -> p.getFileName().toString().endsWith(".hfl")).toList()) {
                Files.copy(log, to.resolve(log.getFileName()));
            }
        }
    }

    private record Run(int code, String out) {
    }

    private static Run restore(Path data, Path backups, String... more) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String[] args = new String[4 + more.length];
        System.arraycopy(new String[] {"--data-dir", data.toString(), "--from", backups.toString()}, 0, args, 0, 4);
        System.arraycopy(more, 0, args, 4, more.length);
        int code = CatalogRestoreTool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(out, true, StandardCharsets.UTF_8), Clock.systemUTC());
        return new Run(code, out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void restore_snapshotCommittedAfterTheBackup_nextBackupDoesNotGetItsId() throws Exception {
        Path old = dir.resolve("old");
        Path backups = dir.resolve("backups");
        long id1;
        long id2;
        long lostId;
        try (MetadataDb db = MetadataDb.open(old.resolve("catalog"))) {
            storeOneBlock(db, old.resolve("data"));
            Catalog catalog = new Catalog(db);
            id1 = commit(catalog, 0).snapshotId();
            id2 = commit(catalog, 1).snapshotId();
            try (CatalogBackups b = CatalogBackups.open(backups)) {
                b.create(db, "", 7);
            }
            SnapshotRecord lost = commit(catalog, 2);
            assertThat(lost.sequence()).isEqualTo(3);
            lostId = lost.snapshotId();
        }
        Path fresh = dir.resolve("new");
        copyLogs(old.resolve("data"), fresh.resolve("data"));
        Run r = restore(fresh, backups);
        assertThat(r.code()).as(r.out()).isZero();
        assertThat(r.out()).contains("snapshot ids: in 1 volume, the next snapshot takes a sequence at least 1000 past");
        try (MetadataDb db = MetadataDb.open(fresh.resolve("catalog"))) {
            Catalog catalog = new Catalog(db);
            assertThat(catalog.snapshots(VM)).extracting(SnapshotRecord::sequence, SnapshotRecord::snapshotId)
                    .as("the restored snapshots keep their ids").containsExactly(
                            org.assertj.core.groups.Tuple.tuple(1L, id1), org.assertj.core.groups.Tuple.tuple(2L, id2));
            SnapshotRecord next = commit(catalog, 2);
            assertThat(next.sequence()).as("vm01@3 was the lost snapshot's id").isNotEqualTo(3).isEqualTo(1003);
            assertThat(next.snapshotId()).isNotEqualTo(lostId);
        }
    }

    @Test
    void restore_inPlace_theCatalogMovedAsideNamesTheNewestSequence_evenWithoutAGap() throws Exception {
        Path data = dir.resolve("data-dir");
        Path backups = dir.resolve("backups");
        try (MetadataDb db = MetadataDb.open(data.resolve("catalog"))) {
            storeOneBlock(db, data.resolve("data"));
            Catalog catalog = new Catalog(db);
            commit(catalog, 0);
            try (CatalogBackups b = CatalogBackups.open(backups)) {
                b.create(db, "", 7);
            }
            for (long parent = 1; parent <= 4; parent++) {
                commit(catalog, parent); // vm01@2..5, lost with the restore
            }
        }
        Run r = restore(data, backups, "--sequence-gap", "0");
        assertThat(r.code()).as(r.out()).isZero();
        assertThat(r.out()).contains("snapshot ids from the catalog moved aside, past its newest snapshot of each volume: 1 volume");
        try (MetadataDb db = MetadataDb.open(data.resolve("catalog"))) {
            Catalog catalog = new Catalog(db);
            assertThat(catalog.snapshots(VM)).extracting(SnapshotRecord::sequence).containsExactly(1L);
            assertThat(commit(catalog, 1).sequence()).as("vm01@2..5 were lost").isEqualTo(6);
        }
    }

    @Test
    void restore_badSequenceGap_exit2_nothingRestored() throws Exception {
        Path backups = dir.resolve("backups");
        try (MetadataDb db = MetadataDb.open(dir.resolve("old/catalog"));
             CatalogBackups b = CatalogBackups.open(backups)) {
            storeOneBlock(db, dir.resolve("old/data"));
            commit(new Catalog(db), 0);
            b.create(db, "", 7);
        }
        Path fresh = dir.resolve("new");
        copyLogs(dir.resolve("old/data"), fresh.resolve("data"));
        Run r = restore(fresh, backups, "--sequence-gap", "-1");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out()).contains("--sequence-gap -1 is not in 0..1000000000").contains("nothing was changed");
        assertThat(fresh.resolve("catalog")).doesNotExist();
        Run zero = restore(fresh, backups, "--sequence-gap", "0");
        assertThat(zero.code()).as(zero.out()).isZero();
        assertThat(zero.out()).contains("(--sequence-gap 0: they may be)");
        try (MetadataDb db = MetadataDb.open(fresh.resolve("catalog"))) {
            assertThat(commit(new Catalog(db), 1).sequence()).as("gap 0: as before").isEqualTo(2);
        }
    }
}
