package org.holdfast.client;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.security.SecureRandom;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Deletes a temporary file if the JVM exits (Ctrl-C, SIGTERM) while it is still being written, so
 * an interrupted restore or backup leaves nothing behind. The owner calls {@link #release} once the
 * file was renamed into place or deleted; after that the guard does nothing.
 *
 * <p>A shutdown hook rather than {@code deleteOnExit}: the hook can be removed when the file is
 * done, and never deletes the file's final name after the rename (the temporary name is gone then).
 * The hook is in place before the file exists ({@link #create}), so a signal at any moment leaves
 * nothing behind.
 *
 * <p>SIGKILL runs no hook. So that a later run can tell a dead run's file from a live one
 * ({@link LeftoverTempFiles}), the owner locks the file ({@link #lock}) before writing a byte and
 * keeps that lock until the file was renamed or deleted; this JVM's own live files are also listed
 * ({@link #isLive}), because a POSIX lock cannot tell two channels of one process apart.
 */
public final class TempFileGuard {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Longest wait for the lock of a new file: a sweeping run holds it only to look at the file's size. */
    private static final long LOCK_WAIT_NANOS = 10_000_000_000L;
    // this JVM's guarded files (directory's real path), from before they exist until release
    private static final Set<Path> LIVE = ConcurrentHashMap.newKeySet();

    private final Path temp;
    private final Path liveKey; // temp in its directory's real path: the same file however the directory was named
    private final Thread hook;
    private volatile boolean released;
    private volatile boolean hookStarted;

    private TempFileGuard(Path temp, Path liveKey) {
        this.temp = temp;
        this.liveKey = liveKey;
        this.hook = new Thread(this::delete, "holdfast-temp-cleanup");
    }

    /**
     * Creates a new file {@code <prefix><random><suffix>} in {@code dir} with {@code attrs},
     * guarded from before it exists until {@link #release}. The random part is an unsigned decimal
     * long ({@link #isName}).
     */
    public static TempFileGuard create(Path dir, String prefix, String suffix, FileAttribute<?>... attrs)
            throws IOException {
        Path realDir = dir.toRealPath();
        while (true) {
            String name = prefix + Long.toUnsignedString(RANDOM.nextLong()) + suffix;
            TempFileGuard g = new TempFileGuard(dir.resolve(name), realDir.resolve(name));
            LIVE.add(g.liveKey);
            Runtime.getRuntime().addShutdownHook(g.hook);
            try {
                Files.createFile(g.temp, attrs);
                if (g.hookStarted) { // the JVM began exiting while the file was made: the hook may have missed it
                    Files.deleteIfExists(g.temp);
                    throw new IOException("the agent is shutting down");
                }
                return g;
            } catch (FileAlreadyExistsException taken) {
                g.release(); // not ours: never delete it; draw another name
            } catch (IOException | RuntimeException e) {
                g.release();
                throw e;
            }
        }
    }

    /** True if {@code fileName} is exactly a name {@link #create} makes with this prefix and suffix. */
    public static boolean isName(String fileName, String prefix, String suffix) {
        if (!fileName.startsWith(prefix) || !fileName.endsWith(suffix)
                || fileName.length() <= prefix.length() + suffix.length()) {
            return false;
        }
        String random = fileName.substring(prefix.length(), fileName.length() - suffix.length());
        if (random.length() > 20 || (random.length() > 1 && random.charAt(0) == '0')) {
            return false; // Long.toUnsignedString never writes a leading zero
        }
        for (int i = 0; i < random.length(); i++) {
            if (random.charAt(i) < '0' || random.charAt(i) > '9') {
                return false;
            }
        }
        try {
            Long.parseUnsignedLong(random);
            return true;
        } catch (NumberFormatException tooLarge) {
            return false;
        }
    }

    /** True if a guard of this JVM holds {@code name} in the directory whose real path is {@code realDir} (not yet released). */
    static boolean isLive(Path realDir, String name) {
        return LIVE.contains(realDir.resolve(name));
    }

    /** The guarded file. */
    public Path path() {
        return temp;
    }

    /**
     * Locks the whole file through {@code ch}, the owner's channel to it, before anything is written:
     * the lock says "a live run writes this" to other processes and lasts until {@code ch} is closed,
     * so the owner renames the file before closing it. Waits for a run that is briefly looking at the file.
     */
    public void lock(FileChannel ch) throws IOException {
        long deadline = System.nanoTime() + LOCK_WAIT_NANOS;
        while (true) {
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (IOException noLocks) {
                // a file system without locks (some NFS mounts): LeftoverTempFiles cannot lock there either, so it leaves the file alone
                return;
            }
            if (lock != null) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("another process holds a lock on the new temporary file " + temp);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while locking " + temp);
            }
        }
    }

    private void delete() {
        hookStarted = true;
        if (!released) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // the JVM is exiting; nothing else to try
            }
        }
    }

    /** The file was renamed into place or deleted by its owner. Idempotent. */
    public void release() {
        if (released) {
            return;
        }
        released = true;
        LIVE.remove(liveKey);
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException exiting) {
            // the JVM is shutting down: the hook runs (or ran) and sees released
        }
    }
}
