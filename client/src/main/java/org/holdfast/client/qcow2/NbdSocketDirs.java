package org.holdfast.client.qcow2;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.holdfast.client.TempFileGuard;

/**
 * The private directories {@code holdfast-nbd-<random>} (in {@code java.io.tmpdir}) that hold a
 * {@link QemuNbd}'s socket and pid file. qemu-nbd exits when a killed agent's connections close, but
 * the directory stays (SIGKILL runs no cleanup); the next qcow2 backup removes those whose qemu-nbd
 * is gone ({@link #removeLeftovers}). A directory is live while the process its pid file names
 * runs: its only use is to reach that process.
 */
final class NbdSocketDirs {
    static final String PREFIX = "holdfast-nbd-";
    /** A directory without a pid file is left this long: its agent may be starting qemu-nbd. */
    static final Duration START_GRACE = Duration.ofMinutes(10);
    static final String PID_FILE = "pid";

    private NbdSocketDirs() {
    }

    /** A new directory for one qemu-nbd, readable by this user only. */
    static Path create(Path tmp) throws IOException {
        return Files.createTempDirectory(tmp, PREFIX); // mode 0700; the random part is an unsigned decimal long
    }

    /** The system's temporary directory, where {@link QemuNbd} makes its directories. */
    static Path systemTemp() {
        return Path.of(System.getProperty("java.io.tmpdir"));
    }

    /**
     * Removes the directories in {@code tmp} of qemu-nbd processes that are gone (their agent was
     * killed, or an older agent left one), one line each to {@code notices}; a directory whose process
     * runs, another user's, or anything merely named alike stays.
     */
    static List<Path> removeLeftovers(Path tmp, Consumer<String> notices) {
        List<Path> removed = new ArrayList<>();
        List<Path> candidates = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp,
                p -> TempFileGuard.isName(p.getFileName().toString(), PREFIX, ""))) {
            dirs.forEach(candidates::add);
        } catch (IOException | RuntimeException e) {
            return removed; // starting qemu-nbd reports a temporary directory it cannot use
        }
        for (Path dir : candidates) {
            if (dead(dir) && deleteTree(dir)) {
                removed.add(dir);
                notices.accept("removed " + dir + " (the qemu-nbd socket directory of an agent that was killed before"
                        + " it could clean up)");
            }
        }
        return removed;
    }

    private static boolean dead(Path dir) {
        try {
            BasicFileAttributes a = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isDirectory() || !Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).getName().equals(System.getProperty("user.name"))) {
                return false;
            }
            Path pidFile = dir.resolve(PID_FILE);
            if (!Files.isRegularFile(pidFile, LinkOption.NOFOLLOW_LINKS)) {
                return a.lastModifiedTime().toMillis() < System.currentTimeMillis() - START_GRACE.toMillis();
            }
            long pid = Long.parseLong(Files.readString(pidFile).strip());
            // a reused pid only keeps the directory longer
            return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
        } catch (IOException | RuntimeException e) {
            return false; // not ours to judge: unreadable, half-written, another user's
        }
    }

    private static boolean deleteTree(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f); // qemu-nbd's socket and pid file: no subdirectories
            }
            Files.deleteIfExists(dir);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
