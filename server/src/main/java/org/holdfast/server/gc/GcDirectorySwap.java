package org.holdfast.server.gc;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.stream.Stream;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.GcStoreException;

/**
 * How an offline rebuild puts GC metadata built beside the live directory in its place, so that a
 * crash at any point leaves the old directory or the new one whole (at worst none, between the two
 * renames, which a start treats as lost metadata): build in {@code gc.rebuild}, force it to disk,
 * move the old directory aside as {@code gc.replaced-<time>}, move the build in. Used by
 * {@code gc-rebuild} (a server's {@code gc/}) and {@code worker-gc-import} (a worker's {@code range-data/gc}).
 */
public final class GcDirectorySwap {
    /** Where a rebuild builds, beside the directory it replaces. */
    public static final String BUILD_DIR = "gc.rebuild";
    /** The name prefix of a replaced directory, followed by its UTC time {@code yyyyMMdd-HHmmss}. */
    public static final String REPLACED_PREFIX = "gc.replaced-";

    private final Path parent;
    private final String tool;

    /** Swaps directories in {@code parent}; errors name {@code tool} (the command that runs). */
    public GcDirectorySwap(Path parent, String tool) {
        this.parent = parent;
        this.tool = tool;
    }

    /** The build directory, emptied of an earlier run's leftover. */
    public Path freshBuild() {
        Path build = parent.resolve(BUILD_DIR);
        deleteTree(build);
        return build;
    }

    /**
     * Moves {@code live} (if it exists) aside as {@code gc.replaced-<time>}, then {@code build} to
     * {@code live}; returns the name it was moved aside as, or null.
     */
    public String swap(Path build, Path live, Clock clock) {
        String replaced = null;
        if (Files.exists(live)) {
            String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(clock.instant());
            Path aside = parent.resolve(REPLACED_PREFIX + stamp);
            for (int k = 1; Files.exists(aside); k++) {
                aside = parent.resolve(REPLACED_PREFIX + stamp + "-" + k);
            }
            move(live, aside);
            replaced = aside.getFileName().toString();
            KillPoints.hit(KillPoints.GC_REBUILD_BETWEEN_RENAMES);
        }
        move(build, live);
        return replaced;
    }

    /** Forces every file and directory under {@code dir} to disk. */
    public void forceTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (Files.isDirectory(p)) {
                    forceDir(p);
                } else {
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                        ch.force(true);
                    }
                }
            }
        } catch (IOException e) {
            throw new GcStoreException(tool, dir, null, "cannot force to disk: " + e.getMessage(), e);
        }
    }

    /** Deletes {@code dir} and everything under it, if it exists. */
    public void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            List<Path> all = s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList();
            for (Path p : all) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new GcStoreException(tool, dir, null, "cannot delete the leftover of an earlier run: " + e.getMessage(), e);
        }
    }

    private void move(Path from, Path to) {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new GcStoreException(tool, from, null, "cannot rename to " + to + ": " + e.getMessage(), e);
        }
        forceDir(parent);
    }

    private static void forceDir(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // some file systems cannot fsync a directory; the rename is still atomic
        }
    }
}
