package org.holdfast.server.gc;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.stream.Stream;
import org.holdfast.server.store.DataLog;

/**
 * A private copy of a stopped server's metadata (the RocksDB catalog and the GC directory) for the
 * offline checker, so that what opening them writes (RocksDB's log and manifest, the GC log replay
 * into the GMA, the re-drive of logged operations) lands in the copy and the data directory is
 * only read. RocksDB table files ({@code *.sst}) never change once written, so they are hard-linked
 * where the file system allows (as RocksDB checkpoints do) and copied otherwise; every other file
 * is copied. The copy is deleted on {@link #close()}.
 */
final class ScratchMetadata implements AutoCloseable {
    private final Path root;

    private ScratchMetadata(Path root) {
        this.root = root;
    }

    /** Copies {@code dataDir/catalog} and {@code dataDir/gc} (if present) under a new directory in {@code parent}. */
    static ScratchMetadata copy(Path dataDir, Path parent) {
        Path root;
        try {
            root = Files.createTempDirectory(parent, "holdfast-check-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a scratch directory in " + parent + " for the checker's copy of the"
                    + " metadata: " + e.getMessage() + " (give another one with --scratch-dir)", e);
        }
        ScratchMetadata s = new ScratchMetadata(root);
        try {
            copyTree(dataDir.resolve("catalog"), root.resolve("catalog"));
            if (Files.isDirectory(dataDir.resolve("gc"))) {
                copyTree(dataDir.resolve("gc"), root.resolve("gc"));
            }
        } catch (IOException | RuntimeException e) {
            s.close();
            throw new IllegalStateException("cannot copy the metadata of " + dataDir + " to " + root + ": " + e.getMessage(), e);
        }
        return s;
    }

    Path catalogDir() {
        return root.resolve("catalog");
    }

    Path gcDir() {
        return root.resolve("gc");
    }

    /**
     * A directory of symbolic links to the data logs in {@code dataDir}, for a read-only store that
     * fetches missing logs from the object store: fetched logs land here, never in the data directory.
     */
    Path linkDataLogs(Path dataDir) {
        Path view = root.resolve("data");
        try (Stream<Path> s = Files.list(dataDir)) {
            Files.createDirectories(view);
            for (Path p : s.filter(p -> DataLog.parseId(p.getFileName().toString()) >= 0).toList()) {
                Files.createSymbolicLink(view.resolve(p.getFileName()), p.toAbsolutePath());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot link the data logs of " + dataDir + " into " + view + ": " + e.getMessage(), e);
        }
        return view;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(file).toString());
                if (file.getFileName().toString().endsWith(".sst")) {
                    try {
                        Files.createLink(target, file);
                        return FileVisitResult.CONTINUE;
                    } catch (IOException | UnsupportedOperationException e) {
                        // another file system, or no hard links: copy it
                    }
                }
                Files.copy(file, target, StandardCopyOption.COPY_ATTRIBUTES);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** Deletes the copy (unlinking a hard link leaves the original). Idempotent. */
    @Override
    public void close() {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("could not delete the checker's scratch copy " + root + ": " + e.getMessage());
        }
    }
}
