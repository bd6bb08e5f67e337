package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongConsumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.rocksdb.BackupInfo;
import org.rocksdb.RestoreOptions;
import org.rocksdb.RocksDBException;

/**
 * Online backups of the catalog (RocksDB's {@code BackupEngine}) in a directory on another disk.
 *
 * <p>Why the backup engine and not a checkpoint: a checkpoint on another file system is a full copy
 * each time, while the engine shares table files between backups (they are immutable; a backup copies
 * only the tables written since the last one, checksummed), and restores with a check of every file.
 * Each backup flushes the memtables first and then copies the live files as they were at that point
 * (a write-ahead log only up to it), so it is the catalog at one point in time while commits go on.
 * The copy runs on the caller's thread and holds no lock of ours: the engine keeps RocksDB from
 * deleting the files it copies.
 *
 * <p>Verification ({@link #verify}) is ours: RocksJava exposes no {@code VerifyBackup}, so
 * {@link CatalogBackupCheck} reads the engine's meta file and checks each file's size and CRC32C;
 * the outcome is kept beside the backups ({@link CatalogBackupOutcomes}). A shared table found
 * damaged would be shared by every later backup too (the engine copies a table only if its file is
 * absent), so the next backup first sets such files aside ({@link DamagedFilesAside}) and the table
 * is copied afresh.
 *
 * <p>This class ties those parts together; the engine's life (opening it lazily, reopening it, closing
 * it in order) is {@link CatalogBackupEngine}'s, which we own and close in {@link #close()}. One
 * operation at a time: the engine is not safe for concurrent use, so its calls are synchronized
 * ({@link #bytesOnDisk()}, which only reads the directory, is not). A verification reads files only
 * and does not hold that monitor (listing goes on while it reads); a read lock keeps a backup's
 * purge from deleting files under it.
 */
public final class CatalogBackups implements AutoCloseable {
    private static final String STORE = "catalog-backup";

    /**
     * One backup: its id (increasing from 1), when it was taken (epoch seconds), its total size and
     * file count (shared tables counted in every backup that holds them) and the text the caller
     * stored with it.
     */
    public record Info(int id, long timeSeconds, long bytes, int files, String metadata) {
    }

    /**
     * The last check of backup {@code id}: when (epoch ms), with {@code checksums} or of sizes only,
     * the files and bytes checked, how many files are damaged, and the first few of those (names
     * relative to the backup directory) with what is wrong.
     */
    public record Verification(int id, long atMillis, boolean checksums, long files, long bytes, long damaged,
                               List<String> damagedFiles, List<String> problems) {
        public Verification {
            damagedFiles = List.copyOf(damagedFiles);
            problems = List.copyOf(problems);
        }

        public boolean sound() {
            return damaged == 0;
        }
    }

    private final Path dir;
    // held shared by a verification, exclusively by a backup (whose purge deletes files)
    private final ReentrantReadWriteLock files = new ReentrantReadWriteLock();
    private final CatalogBackupEngine engine; // every call but close() under this monitor
    // what the last list() saw: read without waiting for a backup's copy to end (health, metrics, a request's check);
    // null until the engine was opened (a link stood in the directory at open)
    private volatile List<Info> listed;
    private final CatalogBackupOutcomes outcomes;

    private CatalogBackups(Path dir) {
        this.dir = dir;
        try {
            boolean existed = Files.isDirectory(dir);
            Files.createDirectories(dir);
            if (!existed) {
                // it holds the users' password hashes and the token hashes: owner only, as a new data directory
                DataDirectory.protect(dir, false);
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
        outcomes = new CatalogBackupOutcomes(dir);
        engine = new CatalogBackupEngine(dir, this);
        if (engine.opened()) { // else a link stands in the directory: listed once the engine opens
            list();
        }
    }

    /**
     * Why the catalog backups cannot run now, naming the symbolic link planted in their directory and
     * what to do; null if none is there. Only looks (for the health check and metrics).
     */
    public String linkProblem() {
        return BackupDirLinks.problem(dir);
    }

    /** Opens (creating if needed) the backups in {@code dir}. */
    public static CatalogBackups open(Path dir) {
        return new CatalogBackups(dir.toAbsolutePath().normalize());
    }

    /**
     * As {@link #open(Path)} for the server whose data directory is {@code dataRoot}: refuses a
     * {@code dir} inside it (symbolic links followed), since a backup on the disk it guards is lost with it.
     */
    public static CatalogBackups openBeside(Path dataRoot, Path dir) {
        Path root = real(dataRoot);
        Path target = real(dir);
        if (target.startsWith(root)) {
            throw new StoreException(STORE, target.toString(), null, "the catalog backup directory lies inside the data directory "
                    + root + ": a backup there is lost with the disk it should survive; set holdfast.catalog.backup.directory"
                    + " to a directory on another disk (a second disk, a network mount)", null);
        }
        return open(dir);
    }

    /** The real path of {@code p}, or of its nearest existing ancestor with the rest appended. */
    private static Path real(Path p) {
        Path abs = p.toAbsolutePath().normalize();
        Path existing = abs;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return abs;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(abs));
        } catch (IOException e) {
            return abs;
        }
    }

    public Path dir() {
        return dir;
    }

    /**
     * A new backup, the bytes it added to the backup directory (the tables no older backup held), and
     * the damaged shared files set aside before it (relative names; their tables were copied afresh).
     */
    public record Created(Info info, long bytesCopied, List<String> setAside) {
        public Created {
            setAside = List.copyOf(setAside);
        }
    }

    /**
     * Backs up {@code db} (memtables flushed first) with {@code metadata} stored beside it, then keeps
     * the newest {@code keep} backups (tables no kept backup holds are deleted).
     */
    public synchronized Created create(MetadataDb db, String metadata, int keep) {
        if (keep < 1) {
            throw new IllegalArgumentException("keep at least one catalog backup, got " + keep);
        }
        Created made = create(db, metadata);
        purge(keep);
        return made;
    }

    /** Backs up {@code db} (memtables flushed first) with {@code metadata} stored beside it; deletes nothing older. */
    public synchronized Created create(MetadataDb db, String metadata) {
        requireOpen();
        files.writeLock().lock();
        try {
            BackupDirLinks.requireNoLinkedDirs(dir);
            List<String> setAside = DamagedFilesAside.setAside(dir, engine, outcomes.all(), ids());
            // a record left by a backup id that failed and will be handed out again must not describe the new one
            Set<Integer> ids = ids();
            outcomes.retain(ids);
            DamagedFilesAside.pruneFor(dir, outcomes.all(), ids);
            long before = bytesOnDisk();
            try {
                db.withRocks(rocks -> { // counted: a stop waits for the backup, never frees the database under it
                    engine.require().createNewBackupWithMetadata(rocks, metadata, true);
                    return null;
                });
            } catch (RocksDBException e) {
                throw failed(e, db);
            }
            return new Created(newest(), Math.max(0, bytesOnDisk() - before), setAside);
        } finally {
            files.writeLock().unlock();
        }
    }

    /** Keeps the newest {@code keep} backups: older ones, their tables no kept backup holds, and their verification records go. */
    public synchronized void purge(int keep) {
        if (keep < 1) {
            throw new IllegalArgumentException("keep at least one catalog backup, got " + keep);
        }
        requireOpen();
        files.writeLock().lock();
        try {
            BackupDirLinks.requireNoLinkedDirs(dir);
            engine.require().purgeOldBackups(keep);
            outcomes.retain(ids());
        } catch (RocksDBException e) {
            throw MetadataDb.translate(STORE, dir.toString(), null, e);
        } finally {
            files.writeLock().unlock();
        }
    }

    /**
     * After a new backup that verified damaged: deletes the backups whose last verification found
     * damage and that are not among the newest {@code keep}; sound and never verified ones stay, so
     * the newest sound backup is never deleted here. Without it every damaged backup would be kept
     * (keep applies after a sound one only) and a backup disk that keeps damaging them would fill.
     * Returns the ids deleted.
     */
    public synchronized List<Integer> purgeDamaged(int keep) {
        if (keep < 1) {
            throw new IllegalArgumentException("keep at least one catalog backup, got " + keep);
        }
        requireOpen();
        files.writeLock().lock();
        try {
            BackupDirLinks.requireNoLinkedDirs(dir);
            List<Info> all = list();
            Map<Integer, Verification> recorded = verifications();
            List<Integer> deleted = new ArrayList<>();
            for (int i = 0; i < all.size() - keep; i++) {
                Verification v = recorded.get(all.get(i).id());
                if (v != null && !v.sound()) {
                    engine.require().deleteBackup(all.get(i).id());
                    deleted.add(all.get(i).id());
                }
            }
            outcomes.retain(ids());
            return deleted;
        } catch (RocksDBException e) {
            throw MetadataDb.translate(STORE, dir.toString(), null, e);
        } finally {
            files.writeLock().unlock();
        }
    }

    /**
     * A backup that failed part way: the engine deletes what it wrote of it (we ask again, in case it
     * could not), so the older backups are as they were; a full disk is named with its free space.
     */
    private StoreException failed(RocksDBException e, MetadataDb db) {
        try {
            engine.require().garbageCollect();
        } catch (RocksDBException gc) {
            e.addSuppressed(gc);
        }
        // the flush before the copy writes the catalog's own disk: a full data disk is not the backup disk's fault
        if (StoreException.isNoSpace(e) && !String.valueOf(e.getMessage()).contains(db.path())) {
            long free;
            try {
                free = DiskSpace.of(dir).usableBytesUnchecked();
            } catch (RuntimeException unknown) {
                free = -1;
            }
            return new StorageFullException(STORE, dir.toString(), null, "the catalog backup directory " + dir + " ran out of space"
                    + " while the backup was copied, so it was abandoned; with its partial files deleted the disk has " + free
                    + " bytes free, and the older backups are intact. Free space there, point holdfast.catalog.backup.directory at"
                    + " a bigger disk or lower holdfast.catalog.backup.keep; the next backup (scheduled, or POST"
                    + " /api/v1/catalog/backups) tries again",
                    e, free, -1);
        }
        return MetadataDb.translate(STORE, dir.toString(), null, e);
    }

    private Set<Integer> ids() {
        return list().stream().map(Info::id).collect(Collectors.toSet());
    }

    /** The backups, oldest first. */
    public synchronized List<Info> list() {
        requireOpen();
        List<Info> out = new ArrayList<>();
        for (BackupInfo b : engine.require().getBackupInfo()) {
            out.add(new Info(b.backupId(), b.timestamp(), b.size(), b.numberFiles(), b.appMetadata()));
        }
        out.sort(Comparator.comparingInt(Info::id));
        listed = List.copyOf(out);
        return out;
    }

    private Info newest() {
        List<Info> all = list();
        return all.isEmpty() ? null : all.get(all.size() - 1);
    }

    /** The backup with {@code id}, or, for null, the newest; throws {@link UnknownCatalogBackupException} naming the ones there are. */
    public synchronized Info require(Integer id) {
        return find(list(), id);
    }

    /**
     * As {@link #require(Integer)} among the backups listed last, without waiting for a backup in
     * progress: for a request that only queues work (the work itself calls {@link #require}).
     */
    public Info requireListed(int id) {
        List<Info> last = listed;
        // never listed: the engine waits for a link (the error names it) or opens now, as no backup copies yet
        return last == null ? require(id) : find(last, id);
    }

    private Info find(List<Info> all, Integer id) {
        if (all.isEmpty()) {
            throw new UnknownCatalogBackupException(dir + " holds no catalog backup");
        }
        if (id == null) {
            return all.get(all.size() - 1);
        }
        for (Info i : all) {
            if (i.id() == id) {
                return i;
            }
        }
        throw new UnknownCatalogBackupException("no catalog backup " + id + " in " + dir + "; it holds "
                + all.stream().map(i -> String.valueOf(i.id())).toList());
    }

    /**
     * Checks backup {@code id}'s files (sizes; every byte's CRC32C too if {@code checksums}), reporting
     * bytes read to {@code progress}, and records the outcome beside the backups (best effort: a backup
     * disk that refuses the record does not hide the outcome, which is returned).
     */
    public Verification verify(int id, boolean checksums, LongConsumer progress, long nowMillis) {
        require(id);
        // what it would read through a link is not the backup, and its record would steer the next set-aside
        BackupDirLinks.requireNoLinkedDirs(dir);
        files.readLock().lock();
        Verification v;
        try {
            CatalogBackupCheck.Outcome o = CatalogBackupCheck.run(dir, id, checksums, progress);
            v = new Verification(id, nowMillis, checksums, o.files(), o.bytes(), o.damaged(), o.damagedFiles(), o.problems());
        } finally {
            files.readLock().unlock();
        }
        outcomes.record(v);
        return v;
    }

    /**
     * The last verification of each backup there is, by id (a backup never verified has none). Does
     * not wait for a backup in progress (the health check and metrics call it): the backups are those
     * listed last, which every change lists again.
     */
    public Map<Integer, Verification> verifications() {
        List<Info> last = listed;
        Set<Integer> ids = last == null ? Set.of() : last.stream().map(Info::id).collect(Collectors.toSet());
        Map<Integer, Verification> all = outcomes.all();
        all.keySet().retainAll(ids);
        return all;
    }

    /**
     * The newest backup older than {@code id} that holds none of {@code damagedFiles} (a shared table
     * that rotted is in every backup that shares it) and whose last verification, if any, found it
     * sound; null if there is none.
     */
    public Integer olderWithout(int id, List<String> damagedFiles) {
        List<Info> all = list();
        Map<Integer, Verification> recorded = verifications();
        for (int i = all.size() - 1; i >= 0; i--) {
            int older = all.get(i).id();
            if (older >= id || (recorded.containsKey(older) && !recorded.get(older).sound())) {
                continue;
            }
            try {
                if (CatalogBackupCheck.files(dir, older).stream().noneMatch(f -> damagedFiles.contains(f.name()))) {
                    return older;
                }
            } catch (StoreException e) {
                // its own meta file is unreadable: not one to suggest
            }
        }
        return null;
    }

    /**
     * Bytes the backup directory takes on disk (shared tables once): what the backups cost. Not
     * synchronized, so that a progress report can read it while a backup copies; a file renamed or
     * deleted under the walk counts as nothing.
     */
    public long bytesOnDisk() {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.mapToLong(p -> {
                try {
                    return Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? Files.size(p) : 0; // a link's target is not ours
                } catch (IOException e) {
                    return 0; // renamed or deleted meanwhile (a temporary file, a purge)
                }
            }).sum();
        } catch (IOException | java.io.UncheckedIOException e) {
            return 0; // a directory went away under the walk: the next call sees the new state
        }
    }

    /**
     * Restores backup {@code id} into {@code target}, which must not exist or be empty (a stopped
     * server's catalog directory, moved aside first). Every file's checksum is checked on the way.
     */
    public synchronized void restore(int id, Path target) {
        requireOpen();
        require(id);
        try {
            if (Files.exists(target)) {
                try (Stream<Path> s = Files.list(target)) {
                    if (s.findAny().isPresent()) {
                        throw new IllegalStateException(target + " is not empty; move it aside before restoring a catalog into it");
                    }
                }
            }
            Files.createDirectories(target);
        } catch (IOException e) {
            throw StoreException.translate(STORE, target.toString(), null, e);
        }
        try (RestoreOptions ro = new RestoreOptions(false)) {
            engine.require().restoreDbFromBackup(id, target.toString(), target.toString(), ro);
        } catch (RocksDBException e) {
            if (MetadataDb.isCorruption(e)) {
                // the backup's file failed its checksum: the running catalog is not what is damaged
                throw new StoreException(STORE, dir.toString(), "backup " + id, "catalog backup " + id + " is damaged (" + e.getMessage()
                        + "); restore another one (--backup-id, GET /api/v1/catalog/backups lists them)", e);
            }
            throw MetadataDb.translate(STORE, dir.toString(), "backup " + id, e);
        }
    }

    /**
     * The engine's checks ({@link CatalogBackupEngine#require()}): closed, or opened now that no link
     * stands in the directory. Every caller holds this monitor (so one open, never beside
     * {@link #close()}); the health check and the metrics never get here (they read
     * {@link #linkProblem} and the last listing).
     */
    private void requireOpen() {
        engine.require();
    }

    /** Idempotent: the engine, then its options ({@link CatalogBackupEngine#close()}). */
    @Override
    public synchronized void close() {
        engine.close();
    }
}
