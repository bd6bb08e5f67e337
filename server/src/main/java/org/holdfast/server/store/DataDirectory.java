package org.holdfast.server.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The server's data directory, held exclusively: {@code holdfast.lock} inside it carries an OS file
 * lock for as long as this object is open, so a second server on the same directory fails at
 * startup with a clear message instead of corrupting the first one's data. Layout:
 * {@code catalog/} (the metadata database), {@code data/} (data logs), plus whatever the engine
 * and GC keep in their own subdirectories.
 */
public final class DataDirectory implements AutoCloseable {
    /** Name of the lock file. */
    public static final String LOCK_FILE = "holdfast.lock";

    private final Path root;
    private final FileChannel lockChannel;
    private final FileLock lock;

    private DataDirectory(Path root, FileChannel lockChannel, FileLock lock) {
        this.root = root;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /**
     * Creates the directory if needed, checks that it is writable, and locks it.
     *
     * @throws StoreException naming the directory if it cannot be created or written, or is in use
     */
    public static DataDirectory open(Path dir) {
        Path root = dir.toAbsolutePath().normalize();
        boolean existed = Files.exists(root);
        try {
            Files.createDirectories(root);
        } catch (IOException e) {
            throw new StoreException("data-dir", root.toString(), null, "cannot create the data directory: " + e, e);
        }
        protect(root, existed);
        if (!Files.isDirectory(root) || !Files.isWritable(root)) {
            throw new StoreException("data-dir", root.toString(), null, "the data directory is not writable by this user", null);
        }
        Path lockPath = root.resolve(LOCK_FILE);
        FileChannel ch;
        try {
            ch = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new StoreException("data-dir", lockPath.toString(), null, "cannot open the lock file: " + e, e);
        }
        FileLock lock = tryLock(ch, lockPath, false);
        if (lock == null) {
            closeQuietly(ch);
            throw new DataDirectoryInUseException(root.toString(), lockPath.toString());
        }
        try {
            ch.truncate(0);
            ch.write(java.nio.ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
        } catch (IOException e) {
            // the pid is informational only
        }
        return new DataDirectory(root, ch, lock);
    }

    /**
     * Opens an existing data directory for a checker: nothing is created or written, and a shared
     * lock on the lock file (taken through a read-only channel) keeps a server from starting on it
     * meanwhile and fails if one runs.
     *
     * @throws StoreException naming the directory if it is no data directory or a server holds it
     */
    public static DataDirectory openReadOnly(Path dir) {
        Path root = dir.toAbsolutePath().normalize();
        Path lockPath = root.resolve(LOCK_FILE);
        if (!Files.isDirectory(root.resolve("catalog"))) {
            throw new StoreException("data-dir", root.toString(), null, "not a Holdfast data directory (no catalog/ in it)", null);
        }
        if (!Files.exists(lockPath)) {
            return new DataDirectory(root, null, null); // no server ever locked it (a copy, a test): creating the file would write
        }
        FileChannel ch;
        try {
            ch = FileChannel.open(lockPath, StandardOpenOption.READ);
        } catch (IOException e) {
            throw new StoreException("data-dir", lockPath.toString(), null, "cannot open the lock file: " + e, e);
        }
        FileLock lock = tryLock(ch, lockPath, true);
        if (lock == null) {
            closeQuietly(ch);
            throw new StoreException("data-dir", root.toString(), null,
                    "the data directory is in use by a running Holdfast server (lock file " + lockPath + "); stop it first", null);
        }
        return new DataDirectory(root, ch, lock);
    }

    /**
     * The data directory holds every backed-up block and the users' password hashes: a new one is
     * made readable by its owner only (0700); an existing one that others can enter gets a warning
     * (its mode is the operator's to change, e.g. a shared group on purpose).
     */
    static boolean protect(Path root, boolean existed) {
        try {
            if (!existed) {
                Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
                return true;
            }
            java.util.Set<java.nio.file.attribute.PosixFilePermission> perms = Files.getPosixFilePermissions(root);
            boolean open = perms.stream().anyMatch(p -> p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_"));
            if (open) {
                System.getLogger(DataDirectory.class.getName()).log(System.Logger.Level.WARNING,
                        "the data directory " + root + " is open to other users (mode "
                                + java.nio.file.attribute.PosixFilePermissions.toString(perms) + "): it holds backed-up blocks (on a worker, their fingerprints)"
                                + " and the users' password hashes; run: chmod 700 " + root);
            }
            return !open;
        } catch (UnsupportedOperationException | IOException e) {
            return false; // not a POSIX file system: nothing to check
        }
    }

    public Path root() {
        return root;
    }

    /** The metadata database directory. */
    public Path catalogDir() {
        return root.resolve("catalog");
    }

    /** The data log directory. */
    public Path dataDir() {
        return root.resolve("data");
    }

    /** A subdirectory for another subsystem (engine, GC), created if missing. */
    public Path subdirectory(String name) {
        Path p = root.resolve(name);
        try {
            Files.createDirectories(p);
        } catch (IOException e) {
            throw StoreException.translate("data-dir", p.toString(), null, e);
        }
        return p;
    }

    /** Releases the lock. Idempotent. */
    @Override
    public void close() {
        if (lock == null) {
            return;
        }
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } catch (IOException ignored) {
            // closing the channel releases it too
        }
        closeQuietly(lockChannel);
    }

    /**
     * The whole file's lock ({@code shared} or exclusive) on {@code ch}, or null if another process
     * (or this one) holds a conflicting one; a failure to lock closes {@code ch}.
     */
    private static FileLock tryLock(FileChannel ch, Path lockPath, boolean shared) {
        try {
            return ch.tryLock(0, Long.MAX_VALUE, shared);
        } catch (OverlappingFileLockException e) {
            return null;
        } catch (IOException e) {
            closeQuietly(ch);
            throw new StoreException("data-dir", lockPath.toString(), null, "cannot lock the data directory: " + e, e);
        }
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }
}
