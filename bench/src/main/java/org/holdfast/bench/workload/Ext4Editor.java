package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Changes to the files inside an ext4 image. Paths are relative to the file system's root.
 * After {@link #close()} the image is consistent (unmounted, or debugfs has run) and can be
 * backed up.
 */
interface Ext4Editor extends AutoCloseable {
    /** Copies a directory tree's contents into the root, keeping symlinks as symlinks. */
    void copyTree(Path source) throws IOException;

    /** Removes files and symlinks (directories stay). */
    void delete(List<String> paths) throws IOException;

    /** Creates or replaces a file the way editors save: new blocks, then the old ones are freed. */
    void writeFile(String path, byte[] content) throws IOException;

    /** Appends to a file, as a logger does. */
    void append(String path, byte[] more) throws IOException;

    /** Creates or replaces a file with a local file's bytes. */
    void installFile(String path, Path source) throws IOException;

    /**
     * Overwrites pages of an existing file in place, as a database does: page {@code pages[i]}
     * (of {@code pageSize} bytes) gets bytes {@code [i * pageSize, (i + 1) * pageSize)} of data.
     */
    void writePages(String path, int pageSize, long[] pages, byte[] data) throws IOException;

    @Override
    void close() throws IOException;
}
