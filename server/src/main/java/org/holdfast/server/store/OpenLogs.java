package org.holdfast.server.store;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open data logs of a {@link DataStore} by id, and whether the store is closed or read-only. The map is
 * concurrent; {@code closed} is guarded as the store's comments say (written under all its locks).
 */
final class OpenLogs {
    private static final System.Logger LOG = System.getLogger(DataStore.class.getName());

    private final Path dir;
    private final boolean readOnly;
    private final Map<Integer, DataLog> logs = new ConcurrentHashMap<>();
    private boolean closed;

    OpenLogs(Path dir, boolean readOnly) {
        this.dir = dir;
        this.readOnly = readOnly;
    }

    void ensureOpen() {
        if (closed) {
            throw new StoreException(DataStore.STORE, dir.toString(), null, "data store is closed", null);
        }
    }

    /** Refuses {@code what} (a write) on a store a checker opened read-only. */
    void ensureWritable(String what) {
        if (readOnly) {
            throw new IllegalStateException("the data store in " + dir + " is open read-only (a checker); cannot " + what);
        }
    }

    boolean isClosed() {
        return closed;
    }

    DataLog get(int id) {
        return logs.get(id);
    }

    void put(DataLog log) {
        logs.put(log.id(), log);
    }

    DataLog remove(int id) {
        return logs.remove(id);
    }

    /** Path of log {@code id} in the data directory. */
    Path path(int id) {
        return dir.resolve(DataLog.fileName(id));
    }

    /** Whether log {@code id} is read from a local file (open, or on disk), not from its object. */
    boolean isLocal(int id) {
        return logs.containsKey(id) || Files.exists(path(id));
    }

    /** Log {@code id}, opened from its file unless open already; null if the file is gone. Under the append lock. */
    DataLog openIfPresent(int id) {
        return logs.computeIfAbsent(id, k -> {
            Path p = dir.resolve(DataLog.fileName(k));
            return isMissing(p) ? null : readOnly ? DataLog.openReadOnly(p, k) : DataLog.open(p, k);
        });
    }

    /** Marks the store closed and closes every log. Under the sync and append locks. */
    void closeAll() {
        closed = true;
        for (DataLog l : logs.values()) {
            l.close();
        }
        logs.clear();
    }

    /** Closes and forgets log {@code id} if it is open. */
    void closeQuietly(int id) {
        DataLog old = logs.remove(id);
        if (old != null) {
            closeQuietly(old);
        }
    }

    private static void closeQuietly(DataLog log) {
        try {
            log.close();
        } catch (StoreException e) {
            // a sealed log has nothing buffered; a failing close only leaks the descriptor
            LOG.log(Level.WARNING, "closing " + log.path() + " failed: " + e.getMessage());
        }
    }

    /**
     * Whether log file {@code p} is definitely gone (no such file). Any other failure to look (an I/O
     * error, a permission, a stale handle) is no such statement: it fails the read and marks nothing,
     * as a missing log would have every block of it marked bad ({@link MissingLogSweep}).
     */
    private static boolean isMissing(Path p) {
        try {
            Files.readAttributes(p, BasicFileAttributes.class);
            return false;
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            throw new StoreException(DataStore.STORE, p.toString(), null, "cannot tell whether data log file " + p + " exists (" + e
                    + "): the read fails and nothing is marked bad; check the data directory's disk and permissions, then read again", e);
        }
    }
}
