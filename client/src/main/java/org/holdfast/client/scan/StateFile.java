package org.holdfast.client.scan;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.zip.CRC32C;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.client.TempFileGuard;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * The agent's memory of the last committed snapshot of one volume on one server: its sequence,
 * block size, volume size and every block's fingerprint. It lets the next backup send only what
 * changed. The file is only a hint: when it is missing, torn, corrupt or does not match, the
 * agent reads everything and asks for a full backup, so a bad state file costs time, never a
 * wrong snapshot.
 *
 * <pre>
 * offset size  field (big-endian)
 *  0      4    magic "HFAS" (0x48464153)
 *  4      2    format version (1)
 *  6      2    reserved, 0
 *  8      4    block size
 * 12      4    reserved, 0
 * 16      8    volume bytes
 * 24      8    block count = ceil(volume bytes / block size)
 * 32      8    snapshot sequence (as COMMITTED reported it)
 * 40      8    committed at, epoch milliseconds
 * 48      4    CRC32C of the fingerprint region
 * 52      8    reserved, 0
 * 60      4    CRC32C of bytes 0..59
 * 64      32 x block count: fingerprints in LBN order (32 zero bytes = zero block)
 * </pre>
 *
 * Written by {@link Writer} to a temporary file beside the final one, fsynced, renamed over it
 * and the directory fsynced, only after the server answered COMMITTED.
 */
public final class StateFile {
    /** "HFAS". */
    public static final int MAGIC = 0x48464153;
    public static final int FORMAT_VERSION = 1;
    public static final int HEADER_BYTES = 64;
    private static final int IO_BUFFER = 1 << 20;

    private StateFile() {
    }

    /** Where the state of {@code volume} on the server keyed {@code serverKey} lives under {@code stateDir}. */
    public static Path path(Path stateDir, String serverKey, String volume) {
        return stateDir.resolve(serverKey).resolve(volume + ".state");
    }

    /** Header fields of a state file. */
    public record Header(int blockSize, long volumeBytes, long blockCount, long sequence, long committedAtMillis, int fingerprintCrc) {
    }

    /** The outcome of loading: a trusted state, or the reason there is none. Exactly one is non-null. */
    public record Loaded(PreviousState state, String reason) {
        public boolean trusted() {
            return state != null;
        }
    }

    /**
     * Loads and fully verifies {@code file} (header, size, both checksums). Never throws for bad
     * content; an unreadable directory or file is also just a reason to read everything.
     */
    public static Loaded load(Path file) {
        if (!Files.exists(file)) {
            return new Loaded(null, "no state file for this volume and server");
        }
        FileChannel ch = null;
        try {
            ch = FileChannel.open(file, StandardOpenOption.READ);
            long size = ch.size();
            if (size < HEADER_BYTES) {
                ch.close();
                return new Loaded(null, "state file is torn (" + size + " bytes)");
            }
            ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
            readFully(ch, h, 0);
            h.flip();
            CRC32C crc = new CRC32C();
            crc.update(h.array(), 0, 60);
            if (h.getInt(0) != MAGIC || h.getShort(4) != FORMAT_VERSION) {
                ch.close();
                return new Loaded(null, "state file has an unknown format");
            }
            if ((int) crc.getValue() != h.getInt(60)) {
                ch.close();
                return new Loaded(null, "state file header is corrupt");
            }
            Header header = new Header(h.getInt(8), h.getLong(16), h.getLong(24), h.getLong(32), h.getLong(40), h.getInt(48));
            if (!ProtocolLimits.isValidBlockSize(header.blockSize()) || header.volumeBytes() < 0
                    || header.blockCount() != ProtocolLimits.blockCount(header.volumeBytes(), header.blockSize())
                    || header.sequence() < 1) {
                ch.close();
                return new Loaded(null, "state file header is inconsistent");
            }
            if (size != HEADER_BYTES + header.blockCount() * Fingerprint.BYTES) {
                ch.close();
                return new Loaded(null, "state file is torn (" + size + " bytes, expected "
                        + (HEADER_BYTES + header.blockCount() * Fingerprint.BYTES) + ")");
            }
            if (fingerprintCrc(ch, header.blockCount()) != header.fingerprintCrc()) {
                ch.close();
                return new Loaded(null, "state file fingerprints are corrupt");
            }
            return new Loaded(new PreviousState(file, ch, header), null);
        } catch (IOException e) {
            closeQuietly(ch);
            return new Loaded(null, "state file unreadable: " + IoReasons.reason(e));
        }
    }

    private static int fingerprintCrc(FileChannel ch, long blockCount) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buf = ByteBuffer.allocateDirect(IO_BUFFER);
        long pos = HEADER_BYTES;
        long end = HEADER_BYTES + blockCount * Fingerprint.BYTES;
        while (pos < end) {
            buf.clear().limit((int) Math.min(IO_BUFFER, end - pos));
            readFully(ch, buf, pos);
            buf.flip();
            pos += buf.remaining();
            crc.update(buf);
        }
        return (int) crc.getValue();
    }

    static void readFully(FileChannel ch, ByteBuffer dst, long pos) throws IOException {
        while (dst.hasRemaining()) {
            int n = ch.read(dst, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file at " + pos);
            }
            pos += n;
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing to do: we are already reporting a problem
            }
        }
    }

    /** A verified state file open for reading fingerprints by LBN. Not thread-safe. */
    public static final class PreviousState implements AutoCloseable {
        private final Path file;
        private final FileChannel ch;
        private final Header header;
        // Read-ahead cache: scans ask for fingerprints in LBN order.
        private final ByteBuffer cache = ByteBuffer.allocate(IO_BUFFER);
        private long cacheFirstLbn = -1;
        private int cacheCount;

        PreviousState(Path file, FileChannel ch, Header header) {
            this.file = file;
            this.ch = ch;
            this.header = header;
        }

        public Header header() {
            return header;
        }

        public long sequence() {
            return header.sequence();
        }

        public int blockSize() {
            return header.blockSize();
        }

        public long volumeBytes() {
            return header.volumeBytes();
        }

        /** Copies the fingerprints of {@code count} LBNs from {@code lbn} into {@code dst} at {@code off}. */
        public void read(long lbn, int count, byte[] dst, int off) {
            if (lbn < 0 || count < 0 || lbn + count > header.blockCount()) {
                throw new IllegalArgumentException("LBNs " + lbn + "+" + count + " outside the state's " + header.blockCount());
            }
            while (count > 0) {
                if (lbn < cacheFirstLbn || lbn >= cacheFirstLbn + cacheCount) {
                    fill(lbn);
                }
                int at = (int) (lbn - cacheFirstLbn);
                int n = Math.min(count, cacheCount - at);
                System.arraycopy(cache.array(), at * Fingerprint.BYTES, dst, off, n * Fingerprint.BYTES);
                lbn += n;
                count -= n;
                off += n * Fingerprint.BYTES;
            }
        }

        private void fill(long lbn) {
            int n = (int) Math.min(IO_BUFFER / Fingerprint.BYTES, header.blockCount() - lbn);
            cache.clear().limit(n * Fingerprint.BYTES);
            try {
                readFully(ch, cache, HEADER_BYTES + lbn * Fingerprint.BYTES);
            } catch (IOException e) {
                throw IoReasons.localIo("cannot read state file", file, e, "delete the state file to force a full backup");
            }
            cacheFirstLbn = lbn;
            cacheCount = n;
        }

        @Override
        public void close() {
            closeQuietly(ch);
        }
    }

    /**
     * Writes the state of a snapshot being made: fingerprints in LBN order while scanning, header
     * at {@link #commit}. Until then the final file is untouched. Not thread-safe.
     */
    public static final class Writer implements AutoCloseable {
        private final Path finalPath;
        private final Path tempPath;
        private final FileChannel ch;
        private final int blockSize;
        private final long volumeBytes;
        private final long blockCount;
        private final ByteBuffer buf = ByteBuffer.allocate(IO_BUFFER);
        private final CRC32C crc = new CRC32C();
        private long written; // fingerprints appended so far
        private long filePos = HEADER_BYTES;
        private boolean done;
        private final TempFileGuard guard; // an interrupted backup leaves no temporary state file

        private Writer(Path finalPath, TempFileGuard guard, FileChannel ch, int blockSize, long volumeBytes) {
            this.finalPath = finalPath;
            this.tempPath = guard.path();
            this.guard = guard;
            this.ch = ch;
            this.blockSize = blockSize;
            this.volumeBytes = volumeBytes;
            this.blockCount = ProtocolLimits.blockCount(volumeBytes, blockSize);
        }

        /** Starts a new state for {@code finalPath}, in a temporary file in the same directory. */
        public static Writer create(Path finalPath, int blockSize, long volumeBytes) {
            try {
                Files.createDirectories(finalPath.getParent());
                TempFileGuard guard = TempFileGuard.create(finalPath.getParent(), finalPath.getFileName() + ".", ".tmp",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                try {
                    return new Writer(finalPath, guard, FileChannel.open(guard.path(), StandardOpenOption.WRITE),
                            blockSize, volumeBytes);
                } catch (IOException | RuntimeException e) {
                    Files.deleteIfExists(guard.path());
                    guard.release();
                    throw e;
                }
            } catch (IOException e) {
                throw IoReasons.localIo("cannot create a state file in", finalPath.getParent(), e,
                        "check that --state-dir is writable");
            }
        }

        /** Fingerprints written so far (= the next LBN expected). */
        public long written() {
            return written;
        }

        /** Appends {@code count} fingerprints from {@code src} at {@code off}, for the next LBNs. */
        public void append(byte[] src, int off, int count) {
            if (written + count > blockCount) {
                throw new IllegalStateException("state would exceed " + blockCount + " blocks");
            }
            int len = count * Fingerprint.BYTES;
            crc.update(src, off, len);
            while (len > 0) {
                int n = Math.min(len, buf.remaining());
                buf.put(src, off, n);
                off += n;
                len -= n;
                if (!buf.hasRemaining()) {
                    flush();
                }
            }
            written += count;
        }

        /** Appends the previous state's fingerprints of the next {@code count} LBNs (they did not change). */
        public void copyFrom(PreviousState prev, long count, byte[] scratch) {
            int per = scratch.length / Fingerprint.BYTES;
            while (count > 0) {
                int n = (int) Math.min(per, count);
                prev.read(written, n, scratch, 0);
                append(scratch, 0, n);
                count -= n;
            }
        }

        private void flush() {
            buf.flip();
            try {
                while (buf.hasRemaining()) {
                    filePos += ch.write(buf, filePos);
                }
            } catch (IOException e) {
                throw ioFailure(e);
            }
            buf.clear();
        }

        /**
         * Completes the file for committed snapshot {@code sequence}: header, fsync, atomic rename
         * over the final path, directory fsync. Every LBN must have been written.
         */
        public void commit(long sequence, long committedAtMillis) {
            if (written != blockCount) {
                throw new IllegalStateException("state has " + written + " of " + blockCount + " fingerprints");
            }
            flush();
            ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
            h.putInt(0, MAGIC).putShort(4, (short) FORMAT_VERSION).putInt(8, blockSize).putLong(16, volumeBytes)
                    .putLong(24, blockCount).putLong(32, sequence).putLong(40, committedAtMillis).putInt(48, (int) crc.getValue());
            CRC32C hc = new CRC32C();
            hc.update(h.array(), 0, 60);
            h.putInt(60, (int) hc.getValue());
            try {
                int pos = 0;
                while (h.hasRemaining()) {
                    pos += ch.write(h, pos);
                }
                ch.force(true);
                ch.close();
                try {
                    Files.move(tempPath, finalPath, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tempPath, finalPath, StandardCopyOption.REPLACE_EXISTING);
                }
                fsyncDirectory(finalPath.getParent());
                done = true;
                guard.release();
            } catch (IOException e) {
                throw ioFailure(e);
            }
        }

        private AgentException ioFailure(IOException e) {
            return IoReasons.localIo("cannot write state file", tempPath, e,
                    "check free space in --state-dir; the next backup will read the whole volume");
        }

        /** Drops the temporary file unless {@link #commit} completed. Idempotent. */
        @Override
        public void close() {
            if (done) {
                return;
            }
            done = true;
            closeQuietly(ch);
            try {
                Files.deleteIfExists(tempPath);
            } catch (IOException ignored) {
                // a stray temp file is harmless: it never has the final name
            }
            guard.release();
        }
    }

    /** Makes a rename in {@code dir} durable (a no-op where directories cannot be opened). */
    public static void fsyncDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // Some platforms refuse to open directories; the rename is still atomic.
        }
    }
}
