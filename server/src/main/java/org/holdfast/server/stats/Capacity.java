package org.holdfast.server.stats;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Size of the file system that holds the data directory, measured at that directory (not the
 * working directory: the data directory is often a mount of its own). {@code freeBytes}: unallocated;
 * {@code usableBytes}: what this process may still write (less, e.g. by ext4's reserved blocks).
 */
public record Capacity(String path, long totalBytes, long freeBytes, long usableBytes) {

    /** Measures the file system of {@code dir} now. */
    public static Capacity of(Path dir) {
        try {
            FileStore fs = Files.getFileStore(dir);
            return new Capacity(dir.toString(), fs.getTotalSpace(), fs.getUnallocatedSpace(), fs.getUsableSpace());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the capacity of the file system of " + dir, e);
        }
    }
}
