package org.holdfast.server.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The cached ranges of archived data logs on local disk: one file per range, named
 * {@code <log id hex>-<range index hex>.rng}, holding bytes {@code [index * rangeBytes, +rangeBytes)}
 * of the log's object (less for its last range). A file appears whole (written aside, forced, then
 * renamed) or not at all; a crash leaves at most a {@code .tmp} file, removed at the next start.
 */
final class RangeFiles {
    private static final String STORE = "range-cache";
    private static final String SUFFIX = ".rng";

    /** One cached range found on disk at start. */
    record Found(int logId, int index, long bytes, long modified) {
    }

    private final Path dir;

    RangeFiles(Path dir) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
    }

    Path dir() {
        return dir;
    }

    private Path path(int logId, int index) {
        return dir.resolve(String.format("%08x-%08x%s", logId, index, SUFFIX));
    }

    /**
     * Copies {@code len} bytes from {@code from} within range {@code index} of log {@code logId} into
     * {@code dst} at {@code dstPos}; returns the range file's length, or -1 if the range is not cached.
     * If the file ends before {@code from + len} (the object's last range) only what it holds is copied:
     * the caller compares the length.
     */
    long read(int logId, int index, int from, ByteBuffer dst, int dstPos, int len) {
        Path p = path(logId, index);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            long size = ch.size();
            int n = (int) Math.max(0, Math.min(len, size - from));
            dst.clear().position(dstPos).limit(dstPos + n);
            long pos = from;
            while (dst.hasRemaining()) {
                int r = ch.read(dst, pos);
                if (r < 0) {
                    break; // shrunk underneath: only an eviction racing a refetch does that; the caller refetches
                }
                pos += r;
            }
            return dst.hasRemaining() ? -1 : size;
        } catch (NoSuchFileException e) {
            return -1;
        } catch (IOException e) {
            throw StoreException.translate(STORE, p.toString(), null, e);
        }
    }

    /** Stores {@code bytes[off..off+len)} as range {@code index} of log {@code logId} (replacing a copy). */
    void write(int logId, int index, byte[] bytes, int off, int len) {
        Path p = path(logId, index);
        Path tmp = p.resolveSibling(p.getFileName() + ".tmp" + Thread.currentThread().getId());
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(bytes, off, len);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                // forced before the rename: after a crash a range file is whole or absent (then fetched again), never
                // torn, since a record that fails its check here would be taken for a lost block
                ch.force(false);
            }
            Files.move(tmp, p, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // removed at the next start
            }
            throw StoreException.translate(STORE, p.toString(), null, e);
        }
    }

    void delete(int logId, int index) {
        DataLog.deleteFile(path(logId, index));
    }

    /** The cached ranges on disk, least recently written first; leftover temporary files are removed. */
    List<Found> scan() {
        List<Found> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                String n = p.getFileName().toString();
                if (n.contains(".tmp")) {
                    Files.deleteIfExists(p);
                    continue;
                }
                if (!n.endsWith(SUFFIX) || n.length() != 17 + SUFFIX.length() || n.charAt(8) != '-') {
                    continue;
                }
                try {
                    int id = Integer.parseUnsignedInt(n.substring(0, 8), 16);
                    int index = Integer.parseUnsignedInt(n.substring(9, 17), 16);
                    out.add(new Found(id, index, Files.size(p), Files.getLastModifiedTime(p).toMillis()));
                } catch (NumberFormatException e) {
                    // not ours
                }
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
        out.sort(Comparator.comparingLong(Found::modified));
        return out;
    }
}
