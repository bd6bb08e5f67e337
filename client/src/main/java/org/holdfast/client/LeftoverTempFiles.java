package org.holdfast.client;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.holdfast.client.progress.Sizes;

/**
 * Removes the temporary files of runs that died without their shutdown hook (SIGKILL, the OOM
 * killer, a power cut): only files named exactly as {@link TempFileGuard#create} names them with
 * the caller's prefix and suffix, only regular files, and only while no live run holds them.
 *
 * <p>A live run is told by its lock ({@link TempFileGuard#lock}) in another process, and by
 * {@link TempFileGuard#isLive} in this one (the daemon runs several backups in one JVM, and closing
 * any channel of a file drops every POSIX lock this process holds on it, so this JVM never opens its
 * own live files). A file this run could lock but that is empty and new may belong to a run that
 * created it and is about to lock it: it stays (it costs nothing) until it is older than
 * {@link #EMPTY_GRACE}.
 */
public final class LeftoverTempFiles {
    /** How long an unlocked empty file is left alone: a live run locks its new file at once. */
    static final Duration EMPTY_GRACE = Duration.ofMinutes(1);

    private LeftoverTempFiles() {
    }

    /** One file removed and its size. */
    public record Removed(Path file, long bytes) {
    }

    /**
     * Removes leftovers {@code <prefix><random><suffix>} in {@code dir} and tells {@code notices} one
     * line per file removed, with its size; {@code what} says whose files they are ("a backup of
     * volume vm1"). A missing or unreadable directory, or a file this user may not open, is left alone.
     */
    public static List<Removed> remove(Path dir, String prefix, String suffix, String what, Consumer<String> notices) {
        List<Removed> removed = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return removed;
        }
        Path realDir;
        List<Path> candidates = new ArrayList<>();
        try {
            realDir = dir.toRealPath();
        } catch (IOException e) {
            return removed;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir,
                p -> TempFileGuard.isName(p.getFileName().toString(), prefix, suffix))) {
            files.forEach(candidates::add);
        } catch (IOException | RuntimeException e) {
            return removed; // the run itself reports a directory it cannot use
        }
        for (Path file : candidates) {
            long bytes = TempFileGuard.isLive(realDir, file.getFileName().toString()) ? -1 : removeIfDead(file);
            if (bytes >= 0) {
                removed.add(new Removed(file, bytes));
                notices.accept("removed " + file + " (" + Sizes.format(bytes) + "), left by " + what
                        + " that was killed before it could clean up");
            }
        }
        return removed;
    }

    /** Deletes {@code file} if it is a dead run's; returns its size, or -1 if it stays. */
    private static long removeIfDead(Path file) {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return -1;
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException ours) {
                return -1; // this JVM holds it after all
            }
            if (lock == null) {
                return -1; // a live run in another process
            }
            long bytes = ch.size();
            if (bytes == 0 && Files.getLastModifiedTime(file).toMillis() > System.currentTimeMillis() - EMPTY_GRACE.toMillis()) {
                return -1;
            }
            // deleted while we hold the lock: no run can have taken the file over in between
            Files.delete(file);
            return bytes;
        } catch (NoSuchFileException gone) {
            return -1; // its run finished, or another run removed it
        } catch (IOException | UnsupportedOperationException e) {
            return -1; // not ours to judge (another user's file, a file system without locks)
        }
    }
}
