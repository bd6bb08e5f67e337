package org.holdfast.server.gc;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestInputStream;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.gma.GmaFormat;

/**
 * The file a stopped master exports one worker's GC counts to and the stopped worker imports them
 * from (byte table in docs/architecture.md, "Rebuilding a worker's GC metadata"). All integers
 * big-endian:
 * <pre>
 * header   8  magic "HFWGCNT1"
 *          4  u32 version (2; 1 is still read)
 *          8  u64 worker id
 *          8  u64 first PBN of the worker's range
 *          8  u64 limit of the range (one past its last PBN)
 *          8  u64 mark: the highest GC delta id the counts include
 *          8  u64 creation time, epoch milliseconds
 *  v2 only 8  u64 routed mark: the highest delta id the master routed to the worker (all ones: unknown)
 *          8  u64 the master's outbox entries for the worker at the export (all ones: unknown)
 *          8  reserved, 0
 * records  24 each, PBNs strictly ascending inside the range:
 *             u64 PBN, u32 reference count, u32 pins, u64 expiry (epoch ms, 0: none)
 * trailer  8  u64 number of records
 *          32 SHA-256 of every byte before it
 * </pre>
 * A reader checks the size against the record count before it believes any record, and the
 * checksum before anything is changed ({@link #verify}); the records are read again while they are
 * applied ({@link #read}), checked the same way. A version 1 file reads with the routed mark and the
 * outbox entries unknown, so {@code worker-fsck} compares its counts only on equal marks, as before.
 */
public final class WorkerCountsFile {
    /** The first 8 bytes of every counts file. */
    public static final byte[] MAGIC = "HFWGCNT1".getBytes(StandardCharsets.US_ASCII);
    /** The version this release writes; it also reads {@link #VERSION_1}. */
    public static final int VERSION = 2;
    /** The first version: no routed mark (golden bytes in WorkerCountsFileTest). */
    public static final int VERSION_1 = 1;
    /** Bytes of a version 1 header. */
    public static final int HEADER_BYTES_V1 = 8 + 4 + 5 * 8;
    /** Bytes of the header this release writes (version 2: routed mark, outbox entries, 8 reserved bytes). */
    public static final int HEADER_BYTES = HEADER_BYTES_V1 + 3 * 8;
    /** The routed mark or outbox entries of a header that does not know them (version 1, or a catalog without routed marks). */
    public static final long UNKNOWN = -1;
    /** Bytes of one record. */
    public static final int RECORD_BYTES = 24;
    /** Bytes of the trailer (record count and checksum). */
    public static final int TRAILER_BYTES = 8 + 32;

    private WorkerCountsFile() {
    }

    /**
     * What the header says.
     *
     * @param routedMark    the highest GC delta id the master had routed to the worker at the export, or {@link #UNKNOWN}
     * @param outboxEntries the master's outbox entries for the worker (routed, not acknowledged) at the export, or {@link #UNKNOWN}
     */
    public record Header(long workerId, PbnRange range, long mark, long createdMillis, long routedMark, long outboxEntries) {
        /** A header whose routed mark and outbox entries are unknown (as a version 1 file reads). */
        public Header(long workerId, PbnRange range, long mark, long createdMillis) {
            this(workerId, range, mark, createdMillis, UNKNOWN, UNKNOWN);
        }

        /** True if the file says which deltas the master routed to the worker. */
        public boolean routedMarkKnown() {
            return routedMark != UNKNOWN;
        }
    }

    /** Receives the records in PBN order. */
    @FunctionalInterface
    public interface RecordVisitor {
        void record(long pbn, int rc, int pins, long expiry);
    }

    /** A counts file that cannot be trusted: nothing was changed because of it. */
    public static final class BadCountsFileException extends RuntimeException {
        public BadCountsFileException(Path file, String what) {
            super("the GC counts file " + file + " " + what + "; nothing was changed: export it again on the stopped master"
                    + " (holdfast-server gc-rebuild --worker N --out FILE) and copy it whole");
        }
    }

    /** Writes a counts file to {@code file.partial}, then moves it to {@code file} once complete and on disk. */
    public static final class Writer implements AutoCloseable {
        private final Path file;
        private final Path partial;
        private final PbnRange range;
        private final DigestOutputStream out;
        private final ByteBuffer rec = ByteBuffer.allocate(RECORD_BYTES);
        private long records;
        private long lastPbn = Long.MIN_VALUE;
        private boolean finished;

        public Writer(Path file, Header header) {
            this.file = file;
            this.partial = file.resolveSibling(file.getFileName() + ".partial");
            this.range = header.range();
            try {
                OutputStream os = Files.newOutputStream(partial, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                        StandardOpenOption.WRITE);
                out = new DigestOutputStream(new BufferedOutputStream(os, 1 << 16), sha256());
                ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
                h.put(MAGIC).putInt(VERSION).putLong(header.workerId()).putLong(header.range().first())
                        .putLong(header.range().limit()).putLong(header.mark()).putLong(header.createdMillis())
                        .putLong(header.routedMark()).putLong(header.outboxEntries()).putLong(0);
                out.write(h.array());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + partial + ": " + e.getMessage(), e);
            }
        }

        /** Appends one record; PBNs must ascend inside the range. */
        public void add(long pbn, int rc, int pins, long expiry) {
            if (!range.contains(pbn) || pbn <= lastPbn) {
                throw new IllegalArgumentException("record of PBN " + pbn + " after " + lastPbn + " in range " + range
                        + ": records must ascend inside the range");
            }
            lastPbn = pbn;
            rec.clear();
            rec.putLong(pbn).putInt(rc).putInt(pins).putLong(expiry);
            try {
                out.write(rec.array());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + partial + ": " + e.getMessage(), e);
            }
            records++;
        }

        /** Records added so far. */
        public long records() {
            return records;
        }

        /** Writes the trailer, forces the file to disk and renames it to its name; returns its size. */
        public long finish() {
            try {
                out.write(ByteBuffer.allocate(8).putLong(records).array());
                out.on(false);
                out.write(out.getMessageDigest().digest());
                out.close();
                try (FileChannel ch = FileChannel.open(partial, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                Path parent = file.toAbsolutePath().getParent();
                try (FileChannel d = FileChannel.open(parent, StandardOpenOption.READ)) {
                    d.force(true);
                } catch (IOException ignored) {
                    // some file systems cannot fsync a directory; the rename is still atomic
                }
                finished = true;
                return Files.size(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot finish " + file + ": " + e.getMessage(), e);
            }
        }

        /** Removes the partial file unless {@link #finish} completed. */
        @Override
        public void close() {
            if (finished) {
                return;
            }
            try {
                out.close();
            } catch (IOException ignored) {
                // removed next
            }
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // a leftover .partial is never read
            }
        }
    }

    /** Checks {@code file} whole (size, magic, version, every record, record count, checksum); returns its header. */
    public static Header verify(Path file) {
        return read(file, (pbn, rc, pins, expiry) -> {
        });
    }

    /**
     * Reads {@code file}, handing each record to {@code visitor} as it is checked; returns the header
     * once the trailer and checksum match. A caller must not keep what it built from the records if
     * this throws.
     *
     * @throws BadCountsFileException the file is not a whole, intact counts file of this version
     */
    public static Header read(Path file, RecordVisitor visitor) {
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new BadCountsFileException(file, "cannot be read (" + e.getMessage() + ")");
        }
        if (size < HEADER_BYTES_V1 + TRAILER_BYTES) {
            throw new BadCountsFileException(file, "has " + size + " bytes, which is no header, whole records and a trailer"
                    + " (truncated or not a counts file)");
        }
        MessageDigest digest = sha256();
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
             DigestInputStream in = new DigestInputStream(raw, digest)) {
            ByteBuffer h = ByteBuffer.wrap(in.readNBytes(HEADER_BYTES_V1));
            byte[] magic = new byte[MAGIC.length];
            h.get(magic);
            if (!java.util.Arrays.equals(magic, MAGIC)) {
                throw new BadCountsFileException(file, "does not start with the counts file magic " + new String(MAGIC,
                        StandardCharsets.US_ASCII) + " (not a counts file)");
            }
            int version = h.getInt();
            if (version != VERSION && version != VERSION_1) {
                throw new BadCountsFileException(file, "has format version " + version + "; this release reads versions " + VERSION_1
                        + " and " + VERSION);
            }
            int headerBytes = version == VERSION_1 ? HEADER_BYTES_V1 : HEADER_BYTES;
            if (size < headerBytes + TRAILER_BYTES || (size - headerBytes - TRAILER_BYTES) % RECORD_BYTES != 0) {
                throw new BadCountsFileException(file, "has " + size + " bytes, which is no header, whole records and a trailer"
                        + " (truncated or not a counts file)");
            }
            long expected = (size - headerBytes - TRAILER_BYTES) / RECORD_BYTES;
            long workerId = h.getLong();
            long first = h.getLong();
            long limit = h.getLong();
            long mark = h.getLong();
            long created = h.getLong();
            long routed = UNKNOWN;
            long outbox = UNKNOWN;
            if (version == VERSION) {
                ByteBuffer v2 = ByteBuffer.wrap(in.readNBytes(HEADER_BYTES - HEADER_BYTES_V1));
                routed = v2.getLong();
                outbox = v2.getLong();
                long reserved = v2.getLong();
                if (reserved != 0 || (routed < 0 && routed != UNKNOWN) || (outbox < 0 && outbox != UNKNOWN) || routed > mark) {
                    throw new BadCountsFileException(file, "has a bad version 2 header (routed mark " + routed + " with mark " + mark
                            + ", outbox entries " + outbox + ", reserved " + reserved + ")");
                }
            }
            if (first < 1 || limit <= first || mark < 0) {
                throw new BadCountsFileException(file, "has a bad header (range " + first + ".." + limit + ", mark " + mark + ")");
            }
            PbnRange range = new PbnRange(first, limit);
            byte[] buf = new byte[RECORD_BYTES];
            ByteBuffer r = ByteBuffer.wrap(buf);
            long last = Long.MIN_VALUE;
            for (long i = 0; i < expected; i++) {
                in.readNBytes(buf, 0, RECORD_BYTES);
                r.clear();
                long pbn = r.getLong();
                int rc = r.getInt();
                int pins = r.getInt();
                long expiry = r.getLong();
                if (!range.contains(pbn) || pbn <= last || rc < 0 || pins < 0 || pins > GmaFormat.MAX_PINS) {
                    throw new BadCountsFileException(file, "has a bad record " + i + " (PBN " + pbn + ", RC " + rc + ", pins "
                            + pins + ") for range " + range + " (corrupt)");
                }
                last = pbn;
                visitor.record(pbn, rc, pins, expiry);
            }
            long count = ByteBuffer.wrap(in.readNBytes(8)).getLong();
            in.on(false);
            byte[] sum = in.readNBytes(32);
            if (count != expected) {
                throw new BadCountsFileException(file, "says it holds " + count + " records, its size gives " + expected + " (truncated?)");
            }
            if (!MessageDigest.isEqual(sum, digest.digest())) {
                throw new BadCountsFileException(file, "fails its SHA-256 checksum (corrupt or changed)");
            }
            return new Header(workerId, range, mark, created, routed, outbox);
        } catch (IOException e) {
            throw new BadCountsFileException(file, "cannot be read (" + e.getMessage() + ")");
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
