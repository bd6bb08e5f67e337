package org.holdfast.server.store;

import java.nio.file.Path;
import org.rocksdb.BackupEngine;
import org.rocksdb.BackupEngineOptions;
import org.rocksdb.Env;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The life of the RocksDB {@code BackupEngine} behind {@link CatalogBackups}: opened at once unless a
 * symbolic link stands in the backup directory ({@link BackupDirLinks}; opening deletes the files of a
 * backup left incomplete, which through a link could be files elsewhere), else lazily by the first call
 * once the link is gone; reopened after damaged shared files are set aside (the engine caches its view
 * of the files); closed once.
 *
 * <p>We own the engine and its options; {@link #close()} frees the engine first, then the options it
 * was opened with. Not safe for concurrent use: every call but {@link #close()} runs under the monitor
 * of the {@link CatalogBackups} that owns it (its {@code monitor}), so an open never runs beside a close.
 */
final class CatalogBackupEngine implements AutoCloseable {
    private static final String STORE = "catalog-backup";

    static {
        // the offline catalog-restore opens the backups before any catalog: without this its first native
        // call (BackupEngineOptions) fails with UnsatisfiedLinkError in a fresh JVM
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final Object monitor;
    private final BackupEngineOptions options;
    private BackupEngine engine; // null until opened: a link stood in the directory at construction
    private boolean closed;

    /** Opens the engine over {@code dir} now unless a link stands there (then logs why and waits); {@code monitor} guards every call. */
    CatalogBackupEngine(Path dir, Object monitor) {
        this.dir = dir;
        this.monitor = monitor;
        options = new BackupEngineOptions(dir.toString()).setShareTableFiles(true).setShareFilesWithChecksum(true).setSync(true);
        // opening deletes the files of a backup left incomplete: with a link planted below dir it waits (the
        // server starts; each backup, verification and purge fails naming the link, and the health check shows it)
        String linked = BackupDirLinks.problem(dir);
        if (linked != null) {
            // the logger of the class operators know the messages by
            System.getLogger(CatalogBackups.class.getName()).log(System.Logger.Level.WARNING, linked);
            return;
        }
        try {
            engine = BackupEngine.open(Env.getDefault(), options);
        } catch (RocksDBException e) {
            options.close();
            throw MetadataDb.translate(STORE, dir.toString(), null, e);
        }
    }

    /** True once the engine was opened (at construction, or by a later {@link #require()}). */
    boolean opened() {
        return engine != null;
    }

    /**
     * The open engine. A call after close (a backup queued behind one the stop waited for) must not
     * reach the freed native engine; an engine not opened for a link in the directory is opened once
     * the link is gone.
     */
    BackupEngine require() {
        assert Thread.holdsLock(monitor) : "the engine is opened and closed under its owner's monitor only";
        if (closed) {
            throw new StoreException(STORE, dir.toString(), null, "the catalog backups are closed: the server is stopping;"
                    + " start the backup again once it runs", null);
        }
        if (engine == null) {
            BackupDirLinks.requireNoLinkedDirs(dir);
            try {
                engine = BackupEngine.open(Env.getDefault(), options);
            } catch (RocksDBException e) {
                throw MetadataDb.translate(STORE, dir.toString(), null, e);
            }
        }
        return engine;
    }

    /**
     * Closes the open engine, runs {@code changeFiles} (which moves files under it) and opens it again,
     * whether or not that succeeded: the engine reads which files there are only when it opens. If it
     * cannot open again it is closed for good (the server's next start opens it again).
     */
    void reopenAround(Runnable changeFiles) {
        require().close();
        try {
            changeFiles.run();
        } finally {
            try {
                engine = BackupEngine.open(Env.getDefault(), options);
            } catch (RocksDBException e) {
                options.close();
                closed = true; // nothing to call any more: the server's next start opens it again
                throw MetadataDb.translate(STORE, dir.toString(), null, e);
            }
        }
    }

    /** Deletes the backups the engine found incomplete when it opened (their files were set aside). */
    void deleteCorrupted() {
        BackupEngine open = require();
        for (int corrupt : open.getCorruptedBackups()) {
            try {
                open.deleteBackup(corrupt);
            } catch (RocksDBException e) {
                // listed nowhere; the engine skips it, and a later open deletes what it can
            }
        }
    }

    /** Idempotent: the engine, then its options. */
    @Override
    public void close() {
        synchronized (monitor) {
            if (closed) {
                return;
            }
            closed = true;
            if (engine != null) {
                engine.close();
            }
            options.close();
        }
    }
}
