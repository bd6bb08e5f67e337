package org.holdfast.bench.workload;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Edits an ext4 image without mounting it, for machines without loop devices: changes are
 * collected into a {@code debugfs -w} script and run on {@link #flush()} or {@link #close()}.
 *
 * <p>debugfs cannot append or write inside a file, so appends rewrite the whole file from a local
 * shadow copy (the file moves to new blocks, unlike a real append), and in-place writes go
 * straight into the image at the file's physical blocks (exactly what a database's page write
 * does on disk). Names with a double quote or a newline cannot be expressed in a debugfs script
 * and are skipped.
 */
final class DebugfsExt4Editor implements Ext4Editor {
    private final Path image;
    private final Path staging;
    private final List<String> script = new ArrayList<>();
    private final Set<String> dirs = new HashSet<>();
    private int stagedFiles;

    DebugfsExt4Editor(Path image, Path staging) throws IOException {
        this.image = image;
        this.staging = Files.createDirectories(staging);
    }

    private static boolean expressible(String path) {
        return path.indexOf('"') < 0 && path.indexOf('\n') < 0 && path.indexOf('\\') < 0;
    }

    private static String q(String path) {
        return "\"/" + path + "\"";
    }

    private void mkdirs(String path) {
        int slash = path.lastIndexOf('/');
        if (slash <= 0) {
            return;
        }
        String parent = path.substring(0, slash);
        if (dirs.contains(parent)) {
            return;
        }
        mkdirs(parent);
        // An existing directory makes debugfs print an error and carry on, which is fine.
        script.add("mkdir " + q(parent));
        dirs.add(parent);
    }

    @Override
    public void copyTree(Path source) throws IOException {
        List<Path> entries;
        try (Stream<Path> s = Files.walk(source)) {
            entries = s.sorted().toList();
        }
        for (Path p : entries) {
            String rel = source.relativize(p).toString();
            if (rel.isEmpty() || !expressible(rel)) {
                continue;
            }
            if (Files.isSymbolicLink(p)) {
                mkdirs(rel);
                script.add("symlink " + q(rel) + " \"" + Files.readSymbolicLink(p) + "\"");
            } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                mkdirs(rel + "/x");
            } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                mkdirs(rel);
                script.add("rm " + q(rel));
                script.add("write \"" + p.toAbsolutePath() + "\" " + q(rel));
            }
        }
    }

    @Override
    public void delete(List<String> paths) {
        for (String p : paths) {
            if (expressible(p)) {
                script.add("rm " + q(p));
            }
        }
    }

    @Override
    public void writeFile(String path, byte[] content) throws IOException {
        Path shadow = shadow(path);
        Files.write(shadow, content);
        replaceFromShadow(path, shadow);
    }

    @Override
    public void append(String path, byte[] more) throws IOException {
        Path shadow = shadow(path);
        Files.write(shadow, more, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        replaceFromShadow(path, shadow);
    }

    private void replaceFromShadow(String path, Path shadow) throws IOException {
        // debugfs reads the source when the script runs: give it a snapshot of the shadow now.
        Path staged = staging.resolve("staged-" + (stagedFiles++));
        Files.copy(shadow, staged, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        mkdirs(path);
        script.add("rm " + q(path));
        script.add("write \"" + staged.toAbsolutePath() + "\" " + q(path));
    }

    private Path shadow(String path) throws IOException {
        Path p = staging.resolve("shadow").resolve(path);
        Files.createDirectories(p.getParent());
        return p;
    }

    @Override
    public void installFile(String path, Path source) throws IOException {
        Path shadow = shadow(path);
        Files.copy(source, shadow, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        replaceFromShadow(path, shadow);
    }

    @Override
    public void writePages(String path, int pageSize, long[] pages, byte[] data) throws IOException {
        flush();
        Path shadow = staging.resolve("shadow").resolve(path);
        long[] blocks = Ext4Image.blocksOf(image, path);
        if (!Files.exists(shadow) || blocks.length != (Files.size(shadow) + Ext4Image.BLOCK - 1) / Ext4Image.BLOCK) {
            // debugfs wrote zero blocks as holes, so block i of the list is not block i of the
            // file: change the shadow and rewrite the file instead.
            rewritePages(path, shadow, pageSize, pages, data);
            return;
        }
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw");
             RandomAccessFile s = Files.exists(shadow) ? new RandomAccessFile(shadow.toFile(), "rw") : null) {
            for (int i = 0; i < pages.length; i++) {
                long offset = pages[i] * pageSize;
                int done = 0;
                while (done < pageSize) {
                    long pos = offset + done;
                    int idx = (int) (pos / Ext4Image.BLOCK);
                    if (idx >= blocks.length) {
                        throw new IOException("write past the end of /" + path + " at " + pos);
                    }
                    int within = (int) (pos % Ext4Image.BLOCK);
                    int n = Math.min(pageSize - done, Ext4Image.BLOCK - within);
                    f.seek(blocks[idx] * Ext4Image.BLOCK + within);
                    f.write(data, i * pageSize + done, n);
                    done += n;
                }
                if (s != null) {
                    // Keep the shadow in step in case the whole file is rewritten later.
                    s.seek(offset);
                    s.write(data, i * pageSize, pageSize);
                }
            }
        }
    }

    private void rewritePages(String path, Path shadow, int pageSize, long[] pages, byte[] data) throws IOException {
        if (!Files.exists(shadow)) {
            throw new IOException("cannot write pages of /" + path + ": it was not created by this editor");
        }
        try (RandomAccessFile s = new RandomAccessFile(shadow.toFile(), "rw")) {
            for (int i = 0; i < pages.length; i++) {
                s.seek(pages[i] * pageSize);
                s.write(data, i * pageSize, pageSize);
            }
        }
        replaceFromShadow(path, shadow);
        flush();
    }

    /** Runs the collected script. */
    void flush() throws IOException {
        if (script.isEmpty()) {
            return;
        }
        Path file = staging.resolve("script.debugfs");
        Files.write(file, script, StandardCharsets.UTF_8);
        Processes.run(List.of("debugfs", "-w", "-f", file.toString(), image.toString()), null);
        script.clear();
        for (int i = 0; i < stagedFiles; i++) {
            Files.deleteIfExists(staging.resolve("staged-" + i));
        }
        stagedFiles = 0;
    }

    @Override
    public void close() throws IOException {
        flush();
    }
}
