package org.holdfast.server.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Where the data store asks how much space its file system has left: the real file store
 * ({@link #of}), or a simulated small disk over a directory tree ({@link #simulated}) for tests
 * that cannot mount a small file system.
 */
public interface DiskSpace {
    /** Bytes an unprivileged writer may still allocate (statvfs {@code f_bavail}). */
    long usableBytes() throws IOException;

    /** What this is, for log lines and messages. */
    String describe();

    /** The file store holding {@code dir}; looked up once (the lookup reads the mount table), asked per call. */
    static DiskSpace of(Path dir) {
        FileStore fs;
        try {
            Files.createDirectories(dir);
            fs = Files.getFileStore(dir);
        } catch (IOException e) {
            throw StoreException.translate("data-store", dir.toString(), null, e);
        }
        return new DiskSpace() {
            @Override
            public long usableBytes() throws IOException {
                return fs.getUsableSpace();
            }

            @Override
            public String describe() {
                return "file system " + fs.name() + " of " + dir;
            }
        };
    }

    /**
     * A pretend disk of {@code capacity} bytes holding everything under {@code root} (the real
     * disk's free space still caps it). Walks the tree per call: for tests only.
     */
    static DiskSpace simulated(Path root, long capacity) {
        DiskSpace real = of(root);
        return new DiskSpace() {
            @Override
            public long usableBytes() throws IOException {
                long[] used = {0};
                Files.walkFileTree(root, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                        used[0] += attrs.size();
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException exc) {
                        return FileVisitResult.CONTINUE; // a file deleted while walking takes no space
                    }
                });
                return Math.max(0, Math.min(real.usableBytes(), capacity - used[0]));
            }

            @Override
            public String describe() {
                return "simulated " + capacity + "-byte disk over " + root;
            }
        };
    }

    /** Unchecked variant for callers outside the store. */
    default long usableBytesUnchecked() {
        try {
            return usableBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
