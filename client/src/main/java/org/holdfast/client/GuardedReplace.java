package org.holdfast.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Replaces one of the agent's small files (known servers, a qcow2 bitmap record, the daemon's run
 * log and run markers) atomically and durably through a temporary {@code <name>.<random>.tmp}
 * beside it, made like the state file's: guarded ({@link TempFileGuard}: Ctrl-C or SIGTERM leaves
 * nothing) and locked from before the first byte until the rename, so that the leftover of a run
 * killed with SIGKILL is removed later by {@link #removeLeftovers}, and a live run's file never is.
 * (Not common's {@code DurableReplace}: its one fixed {@code name.tmp} suits a single writer, and
 * agents sharing a state directory write these files at the same time.)
 */
public final class GuardedReplace {
    /** The temporary file's suffix; its prefix is the file's name and a dot. */
    public static final String SUFFIX = ".tmp";
    // every such file names servers, volumes or runs: readable by this user only, whatever the umask
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_FILE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private GuardedReplace() {
    }

    /** The prefix of {@code file}'s temporary names. */
    static String prefix(Path file) {
        return file.getFileName() + ".";
    }

    /**
     * Writes {@code bytes} as {@code file} (mode 0600): a new temporary file, locked,
     * written, forced, renamed over {@code file} while still locked, then the directory forced. On a
     * failure the temporary file is deleted and {@code file} is as it was.
     */
    public static void write(Path file, byte[] bytes) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        TempFileGuard guard = TempFileGuard.create(dir, prefix(file), SUFFIX, PRIVATE_FILE);
        boolean renamed = false;
        try {
            try (FileChannel ch = FileChannel.open(guard.path(), StandardOpenOption.WRITE)) {
                guard.lock(ch);
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
                // renamed before the channel closes: closing drops the lock that says "live"
                try {
                    Files.move(guard.path(), file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(guard.path(), file, StandardCopyOption.REPLACE_EXISTING);
                }
                renamed = true;
            }
        } finally {
            if (!renamed) {
                Files.deleteIfExists(guard.path());
            }
            guard.release();
        }
        fsyncDirectory(dir);
    }

    /**
     * Removes the temporary files of {@code file} that runs killed with SIGKILL left (never a live
     * run's: {@link LeftoverTempFiles}), one line to {@code notices} per file; {@code what} names the
     * writer ("a write of the known-servers file").
     */
    public static List<LeftoverTempFiles.Removed> removeLeftovers(Path file, String what, Consumer<String> notices) {
        return LeftoverTempFiles.remove(file.toAbsolutePath().getParent(), prefix(file), SUFFIX, what, notices);
    }

    /** Forces a directory's entries (a rename in it) to disk, where the platform lets a directory be opened. */
    public static void fsyncDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // Some platforms refuse to open directories; the rename is still atomic.
        }
    }
}
