package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One append-only data log file: a 32-byte file header followed by records (block records,
 * {@link RecordFormat}, in every version; frame records, {@link FrameFormat}, from version 2 on;
 * layouts in docs/architecture.md). Appends happen at the tracked end and only ever
 * from the {@link DataStore}'s append lock; positional reads may run concurrently from any thread.
 *
 * <p>Appends are gathered in a direct write buffer and reach the file in large writes (one
 * system call per {@value #WRITE_BUFFER_BYTES} bytes instead of one per block). That changes no
 * durability: nothing is durable before {@link #force()}, which writes the buffer first. A read
 * of bytes still in the buffer copies them from the buffer. If a write fails (a full disk), the
 * file is cut back to what was written before and the buffered records stay in the buffer: the
 * append that needed the write is refused, and the next write, force or append retries, so the log
 * keeps working once space is back and no record that was handed out is ever lost.
 */
public final class DataLog implements AutoCloseable, LogReader {
    private static final String STORE = "data-log";
    static final int WRITE_BUFFER_BYTES = 1 << 20;

    private final int id;
    private final int version;
    private final Path path;
    private final FileChannel channel;
    // logical end: file bytes plus buffered bytes
    private volatile long size;
    // bytes in the file; buffered appends lie in [written, size)
    private volatile long written;
    // guarded by this
    private ByteBuffer buffer;

    private DataLog(int id, int version, Path path, FileChannel channel, long size) {
        this.id = id;
        this.version = version;
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.written = size;
    }

    /** File name of log {@code id}. */
    public static String fileName(int id) {
        return String.format("%s%08x%s", FormatVersions.DATA_LOG_PREFIX, id, FormatVersions.DATA_LOG_SUFFIX);
    }

    /** The log id encoded in a file name, or -1 if the name is not a data log's. */
    public static int parseId(String fileName) {
        if (!fileName.startsWith(FormatVersions.DATA_LOG_PREFIX) || !fileName.endsWith(FormatVersions.DATA_LOG_SUFFIX)) {
            return -1;
        }
        String hex = fileName.substring(FormatVersions.DATA_LOG_PREFIX.length(), fileName.length() - FormatVersions.DATA_LOG_SUFFIX.length());
        try {
            return hex.length() == 8 ? Integer.parseUnsignedInt(hex, 16) : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Creates log {@code id} with its header, forced to disk (the directory entry too). */
    public static DataLog create(Path dir, int id, long createdMillis) {
        Path p = dir.resolve(fileName(id));
        FileChannel ch = null;
        try {
            ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
            byte[] h = new byte[DATA_LOG_HEADER_BYTES];
            Bytes.putInt(h, 0, FormatVersions.DATA_LOG_MAGIC);
            Bytes.putShort(h, 4, FormatVersions.DATA_LOG_VERSION);
            Bytes.putShort(h, 6, DATA_LOG_HEADER_BYTES);
            Bytes.putInt(h, 8, id);
            Bytes.putLong(h, 12, createdMillis);
            // bytes 20..31 reserved, zero
            writeFully(ch, ByteBuffer.wrap(h), 0);
            ch.force(true);
            forceDirectory(dir);
            return new DataLog(id, FormatVersions.DATA_LOG_VERSION, p, ch, DATA_LOG_HEADER_BYTES);
        } catch (IOException e) {
            if (ch != null) {
                // a half-made log (disk full) must not block the next attempt's CREATE_NEW
                try (FileChannel c = ch) {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // recovery deletes logs beyond the durable point
                }
            }
            throw StoreException.translate(STORE, p.toString(), null, e);
        }
    }

    /** Opens an existing log and checks its header. */
    public static DataLog open(Path file, int expectedId) {
        return open(file, expectedId, false);
    }

    /** Opens an existing log for reading only (a checker): any write through it fails. */
    public static DataLog openReadOnly(Path file, int expectedId) {
        return open(file, expectedId, true);
    }

    private static DataLog open(Path file, int expectedId, boolean readOnly) {
        try {
            FileChannel ch = readOnly ? FileChannel.open(file, StandardOpenOption.READ)
                    : FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
            long len = ch.size();
            if (len < DATA_LOG_HEADER_BYTES) {
                ch.close();
                throw new CorruptDataException(STORE, file.toString(), null, "file is " + len + " bytes, shorter than its header");
            }
            byte[] h = new byte[DATA_LOG_HEADER_BYTES];
            readFully(ch, ByteBuffer.wrap(h), 0, file);
            int magic = Bytes.getInt(h, 0);
            int version = Bytes.getShort(h, 4);
            int id = Bytes.getInt(h, 8);
            String problem = magic != FormatVersions.DATA_LOG_MAGIC ? String.format("bad magic %08x", magic)
                    : version != FormatVersions.DATA_LOG_VERSION && version != FormatVersions.DATA_LOG_VERSION_V1
                    ? "unsupported data log version " + version
                    : id != expectedId ? "header names log " + id + " but the file name says " + expectedId : null;
            if (problem != null) {
                ch.close();
                throw new CorruptDataException(STORE, file.toString(), null, problem);
            }
            return new DataLog(id, version, file, ch, len);
        } catch (IOException e) {
            throw StoreException.translate(STORE, file.toString(), null, e);
        }
    }

    public int id() {
        return id;
    }

    /** The header's format version: 1 (block records only) or 2 (block and frame records). */
    public int version() {
        return version;
    }

    public Path path() {
        return path;
    }

    @Override
    public String name() {
        return path.toString();
    }

    /** Appended bytes still in the write buffer (not yet in the file). */
    long buffered() {
        return size - written;
    }

    /** Bytes in the file, header included. */
    public long size() {
        return size;
    }

    /**
     * Appends {@code buf}'s remaining bytes at the end and returns the offset they start at. The
     * bytes may stay in the write buffer until the next {@link #force()}, read or buffer fill.
     */
    synchronized long append(ByteBuffer buf, long pbn) {
        long at = size;
        int len = buf.remaining();
        if (buffer == null) {
            buffer = ByteBuffer.allocateDirect(WRITE_BUFFER_BYTES);
        }
        if (len > buffer.remaining()) {
            writeBuffer(pbn);
        }
        if (len > buffer.remaining()) {
            try {
                writeFully(channel, buf, at);
            } catch (IOException e) {
                cutBack(at); // nothing of this record counts: the append is refused
                throw StoreException.translate(STORE, path.toString(), "pbn " + pbn, e);
            }
            written = at + len;
        } else {
            buffer.put(buf);
        }
        size = at + len;
        return at;
    }

    /**
     * Writes the buffered appends to the file (page cache). On failure the file is cut back and the
     * buffer keeps them, so a later call retries: nothing handed out is lost.
     */
    private void writeBuffer(long pbn) {
        if (buffer == null || buffer.position() == 0) {
            return;
        }
        long at = written;
        buffer.flip();
        try {
            writeFully(channel, buffer, at);
        } catch (IOException e) {
            buffer.position(buffer.limit()).limit(buffer.capacity()); // back to "filled up to here"
            cutBack(at);
            throw StoreException.translate(STORE, path.toString(), pbn < 0 ? null : "pbn " + pbn, e);
        }
        buffer.clear();
        written = size;
    }

    /** Drops a partly written tail (a retry writes it again at the same place); frees the space a failed write took. */
    private void cutBack(long at) {
        try {
            channel.truncate(at);
        } catch (IOException ignored) {
            // the next write goes to the same positions anyway, and recovery truncates to the durable point
        }
    }

    /** Reads exactly {@code len} bytes at {@code offset} into {@code dst} from position 0. */
    void read(long offset, ByteBuffer dst, int len, long pbn) {
        if (offset < DATA_LOG_HEADER_BYTES || offset + len > size) {
            throw new CorruptDataException(STORE, path.toString(), "pbn " + pbn,
                    "record at " + offset + "+" + len + " lies outside the log (size " + size + ")");
        }
        readRange(offset, dst, 0, len, pbn);
    }

    /** Reads from the file, and the part still in the write buffer from the buffer (no write needed, so a full disk does not stop reads). */
    private void readRange(long offset, ByteBuffer dst, int dstPos, int len, long pbn) {
        if (offset + len <= written) {
            readFile(offset, dst, dstPos, len, pbn);
            return;
        }
        synchronized (this) {
            int filePart = (int) Math.max(0, Math.min(len, written - offset));
            if (filePart > 0) {
                readFile(offset, dst, dstPos, filePart, pbn);
            }
            int rest = len - filePart;
            if (rest > 0) {
                ByteBuffer src = buffer.duplicate();
                int from = (int) (offset + filePart - written);
                src.limit(from + rest).position(from);
                dst.clear().position(dstPos + filePart).limit(dstPos + len);
                dst.put(src);
            }
            dst.limit(dstPos + len).position(dstPos + len); // as a file read leaves it
        }
    }

    private void readFile(long offset, ByteBuffer dst, int dstPos, int len, long pbn) {
        dst.clear().position(dstPos).limit(dstPos + len);
        try {
            readFully(channel, dst, offset, path);
        } catch (IOException e) {
            throw StoreException.translate(STORE, path.toString(), "pbn " + pbn, e);
        }
    }

    /**
     * Writes the buffered appends to the file (page cache, not forced): after this a process crash
     * no longer loses them.
     */
    public synchronized void write() {
        writeBuffer(-1);
    }

    /** Writes the buffered appends and lets the write buffer go: this log takes no more appends. */
    synchronized void seal() {
        writeBuffer(-1);
        buffer = null;
    }

    /** Reads exactly {@code len} bytes at {@code offset} into {@code dst} from {@code dstPos} (one stretch of records). */
    @Override
    public void read(long offset, ByteBuffer dst, int dstPos, int len, long pbn) {
        if (offset < DATA_LOG_HEADER_BYTES || offset + len > size) {
            throw new CorruptDataException(STORE, path.toString(), "pbn " + pbn,
                    "records at " + offset + "+" + len + " lie outside the log (size " + size + ")");
        }
        readRange(offset, dst, dstPos, len, pbn);
    }

    /** Writes the buffered appends and forces the file's content to disk. */
    public synchronized void force() {
        writeBuffer(-1);
        try {
            channel.force(false);
        } catch (IOException e) {
            throw StoreException.translate(STORE, path.toString(), null, e);
        }
    }

    /** Cuts the file to {@code length} bytes and forces that (crash recovery). */
    synchronized void truncate(long length) {
        writeBuffer(-1);
        try {
            channel.truncate(length);
            channel.force(true);
            size = length;
            written = length;
        } catch (IOException e) {
            throw StoreException.translate(STORE, path.toString(), null, e);
        }
    }

    @Override
    public synchronized void close() {
        try (FileChannel ch = channel) {
            writeBuffer(-1); // on failure the records stay beyond the durable point: recovery drops them
        } catch (IOException e) {
            throw StoreException.translate(STORE, path.toString(), null, e);
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf, long pos) throws IOException {
        while (buf.hasRemaining()) {
            pos += ch.write(buf, pos);
        }
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long pos, Path p) throws IOException {
        while (buf.hasRemaining()) {
            int n = ch.read(buf, pos);
            if (n < 0) {
                throw new CorruptDataException(STORE, p.toString(), null, "unexpected end of file at " + pos);
            }
            pos += n;
        }
    }

    static void forceDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // some file systems refuse to open directories; the file itself is forced
        }
    }

    /** Cuts file {@code p} to {@code length} bytes if it is longer, and forces it. */
    static void truncateFile(Path p, long length) {
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(p, java.nio.file.StandardOpenOption.WRITE)) {
            if (ch.size() > length) {
                ch.truncate(length);
                ch.force(true);
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, p.toString(), null, e);
        }
    }

    static void deleteFile(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            throw StoreException.translate(STORE, p.toString(), null, e);
        }
    }
}
