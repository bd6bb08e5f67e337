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
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.client.GuardedReplace;
import org.holdfast.client.LeftoverTempFiles;
import org.holdfast.client.StateDirectory;
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
 * <p>Format 1 (change detection by SHA-256; still read, and written with {@code --change-hash sha256}):
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
 * 52      8    snapshot id (as COMMITTED reported it; 0 = unknown: a server before protocol 5, an older agent)
 * 60      4    CRC32C of bytes 0..59
 * 64      32 x block count: fingerprints in LBN order (32 zero bytes = zero block)
 * </pre>
 *
 * <p>Format 2 (a cheap hash per block beside the fingerprint, {@link ChangeHash}):
 * <pre>
 * offset size  field (big-endian)
 *  0      4    magic "HFAS"
 *  4      2    format version (2)
 *  6      2    change hash kind: 1 = XXH3-128
 *  8      4    block size
 * 12      4    backups since the last full re-hash (0: this snapshot's blocks were all SHA-256 hashed)
 * 16      8    volume bytes
 * 24      8    block count
 * 32      8    snapshot sequence
 * 40      8    committed at, epoch milliseconds
 * 48      4    CRC32C of the entry region
 * 52      4    reserved, 0
 * 56      8    last full re-hash at, epoch milliseconds
 * 64      8    change hash seed
 * 72      8    snapshot id (0 = unknown, as in format 1)
 * 80     44    reserved, 0
 * 124     4    CRC32C of bytes 0..123
 * 128    48 x block count: per LBN, SHA-256 (32) then XXH3-128 (two longs; 0, 0 = unknown)
 * </pre>
 *
 * Written by {@link Writer} to a temporary file beside the final one, fsynced, renamed over it
 * and the directory fsynced, only after the server answered COMMITTED.
 *
 * <p>The snapshot id took reserved bytes that every earlier agent wrote as 0, so no format changed:
 * an older file reads as id unknown and is still trusted (the server then decides by the sequence
 * alone, as before), and an older agent reading a newer file ignores the id.
 */
public final class StateFile {
    /** "HFAS". */
    public static final int MAGIC = 0x48464153;
    /** Fingerprints only. */
    public static final int FORMAT_VERSION = 1;
    /** Fingerprints and cheap change hashes. */
    public static final int FORMAT_VERSION_2 = 2;
    /** Header bytes of format 1. */
    public static final int HEADER_BYTES = 64;
    /** Header bytes of format 2. */
    public static final int HEADER_BYTES_V2 = 128;
    /** Entry bytes of format 2: fingerprint and change hash. */
    public static final int ENTRY_BYTES_V2 = Fingerprint.BYTES + ChangeHash.BYTES;
    /** Format 2's change hash kind: XXH3-128. */
    static final int KIND_XXH3_128 = 1;
    private static final int IO_BUFFER = 1 << 20;
    /** A state being written is {@code <volume>.state.<random>.tmp} beside the final file. */
    static final String TEMP_SUFFIX = ".tmp";

    private StateFile() {
    }

    /** Where the state of {@code volume} on the server keyed {@code serverKey} lives under {@code stateDir}. */
    public static Path path(Path stateDir, String serverKey, String volume) {
        return stateDir.resolve(serverKey).resolve(volume + ".state");
    }

    /** Header fields of a state file; {@code snapshotId} 0 = unknown. */
    public record Header(int blockSize, long volumeBytes, long blockCount, long sequence, long committedAtMillis, int fingerprintCrc,
                         long snapshotId) {
    }

    // where the snapshot id sits in each format's header (bytes that were reserved)
    private static final int SNAPSHOT_ID_OFFSET_V1 = 52;
    private static final int SNAPSHOT_ID_OFFSET_V2 = 72;

    /**
     * What format 2 keeps about its cheap hashes: their seed, how many backups ago every block was
     * last SHA-256 hashed, and when.
     */
    public record ChangeHashes(long seed, int backupsSinceRehash, long rehashedAtMillis) {
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
            String problem = null;
            PreviousState state = null;
            long size = ch.size();
            ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES_V2);
            if (size < HEADER_BYTES) {
                problem = "state file is torn (" + size + " bytes)";
            } else {
                readFully(ch, h.limit(HEADER_BYTES), 0);
                int version = h.getShort(4);
                if (h.getInt(0) != MAGIC) {
                    problem = "the file is not a Holdfast agent state file (no HFAS magic)";
                } else if (version != FORMAT_VERSION && version != FORMAT_VERSION_2) {
                    problem = "state file format " + version + " is not one this agent reads (1, 2): was it written by a newer agent?";
                } else if (version == FORMAT_VERSION_2 && size < HEADER_BYTES_V2) {
                    problem = "state file is torn (" + size + " bytes)";
                } else {
                    if (version == FORMAT_VERSION_2) {
                        readFully(ch, h.limit(HEADER_BYTES_V2), HEADER_BYTES);
                    }
                    Object checked = check(file, ch, h, version, size);
                    if (checked instanceof PreviousState p) {
                        state = p;
                    } else {
                        problem = (String) checked;
                    }
                }
            }
            if (state == null) {
                ch.close();
                return new Loaded(null, problem);
            }
            return new Loaded(state, null);
        } catch (IOException e) {
            closeQuietly(ch);
            return new Loaded(null, "state file unreadable: " + IoReasons.reason(e));
        }
    }

    /** Checks the header in {@code h} and the entry region; returns the state or the reason it is not trusted. */
    private static Object check(Path file, FileChannel ch, ByteBuffer h, int version, long size) throws IOException {
        int headerBytes = version == FORMAT_VERSION ? HEADER_BYTES : HEADER_BYTES_V2;
        CRC32C crc = new CRC32C();
        crc.update(h.array(), 0, headerBytes - 4);
        if ((int) crc.getValue() != h.getInt(headerBytes - 4)) {
            return "state file header is corrupt";
        }
        Header header = new Header(h.getInt(8), h.getLong(16), h.getLong(24), h.getLong(32), h.getLong(40), h.getInt(48),
                h.getLong(version == FORMAT_VERSION ? SNAPSHOT_ID_OFFSET_V1 : SNAPSHOT_ID_OFFSET_V2));
        ChangeHashes hashes = null;
        if (version == FORMAT_VERSION_2) {
            if (h.getShort(6) != KIND_XXH3_128) {
                return "state file has an unknown change hash kind " + h.getShort(6);
            }
            hashes = new ChangeHashes(h.getLong(64), h.getInt(12), h.getLong(56));
        }
        if (!ProtocolLimits.isValidBlockSize(header.blockSize()) || header.volumeBytes() < 0
                || header.blockCount() != ProtocolLimits.blockCount(header.volumeBytes(), header.blockSize())
                || header.sequence() < 1 || (hashes != null && hashes.backupsSinceRehash() < 0)) {
            return "state file header is inconsistent";
        }
        int entryBytes = hashes == null ? Fingerprint.BYTES : ENTRY_BYTES_V2;
        long expected = headerBytes + header.blockCount() * entryBytes;
        if (size != expected) {
            return "state file is torn (" + size + " bytes, expected " + expected + ")";
        }
        if (regionCrc(ch, headerBytes, expected) != header.fingerprintCrc()) {
            return "state file fingerprints are corrupt";
        }
        return new PreviousState(file, ch, header, version, hashes);
    }

    private static int regionCrc(FileChannel ch, long pos, long end) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buf = ByteBuffer.allocateDirect(IO_BUFFER);
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

    /** A verified state file open for reading fingerprints by LBN. Not thread-safe; see {@link #cursor()}. */
    public static final class PreviousState implements AutoCloseable {
        private final Path file;
        private final FileChannel ch;
        private final Header header;
        private final int version;
        private final ChangeHashes changeHashes;
        private final Cursor own = new Cursor();

        PreviousState(Path file, FileChannel ch, Header header, int version, ChangeHashes changeHashes) {
            this.file = file;
            this.ch = ch;
            this.header = header;
            this.version = version;
            this.changeHashes = changeHashes;
        }

        public Header header() {
            return header;
        }

        public long sequence() {
            return header.sequence();
        }

        /** The snapshot's identity as COMMITTED reported it; 0 = unknown. */
        public long snapshotId() {
            return header.snapshotId();
        }

        public int blockSize() {
            return header.blockSize();
        }

        public long volumeBytes() {
            return header.volumeBytes();
        }

        /** 1 or 2. */
        public int formatVersion() {
            return version;
        }

        /** True if the file keeps a cheap hash per block (format 2). */
        public boolean hasChangeHashes() {
            return changeHashes != null;
        }

        /** Format 2's change-hash fields; null for format 1. */
        public ChangeHashes changeHashes() {
            return changeHashes;
        }

        public int backupsSinceRehash() {
            return changeHashes == null ? 0 : changeHashes.backupsSinceRehash();
        }

        public long rehashedAtMillis() {
            return changeHashes == null ? 0 : changeHashes.rehashedAtMillis();
        }

        private int entryBytes() {
            return changeHashes == null ? Fingerprint.BYTES : ENTRY_BYTES_V2;
        }

        /** Copies the fingerprints of {@code count} LBNs from {@code lbn} into {@code dst} at {@code off}. */
        public void read(long lbn, int count, byte[] dst, int off) {
            own.read(lbn, count, dst, off, null, 0);
        }

        /** Like {@link #read} with the change hashes too (two longs per LBN, 0, 0 where the file has none). */
        public void read(long lbn, int count, byte[] dst, int off, long[] hashes, int hashOff) {
            own.read(lbn, count, dst, off, hashes, hashOff);
        }

        /** A reader of its own, for another thread (positional reads on the shared channel are safe). */
        public Cursor cursor() {
            return new Cursor();
        }

        @Override
        public void close() {
            closeQuietly(ch);
        }

        /** Reads entries in LBN order with a read-ahead cache. Not thread-safe. */
        public final class Cursor {
            private final ByteBuffer cache = ByteBuffer.allocate(IO_BUFFER);
            private long cacheFirstLbn = -1;
            private int cacheCount;

            private Cursor() {
            }

            /**
             * Copies the fingerprints of {@code count} LBNs from {@code lbn} into {@code dst} at
             * {@code off}, and unless {@code hashes} is null their change hashes into it at
             * {@code hashOff} (two longs per LBN; 0, 0 from a format 1 file).
             */
            public void read(long lbn, int count, byte[] dst, int off, long[] hashes, int hashOff) {
                if (lbn < 0 || count < 0 || lbn + count > header.blockCount()) {
                    throw new IllegalArgumentException("LBNs " + lbn + "+" + count + " outside the state's " + header.blockCount());
                }
                int entry = entryBytes();
                while (count > 0) {
                    if (lbn < cacheFirstLbn || lbn >= cacheFirstLbn + cacheCount) {
                        fill(lbn, entry);
                    }
                    int at = (int) (lbn - cacheFirstLbn);
                    int n = Math.min(count, cacheCount - at);
                    if (entry == Fingerprint.BYTES) {
                        System.arraycopy(cache.array(), at * entry, dst, off, n * Fingerprint.BYTES);
                        if (hashes != null) {
                            Arrays.fill(hashes, hashOff, hashOff + 2 * n, 0L);
                        }
                    } else {
                        for (int i = 0; i < n; i++) {
                            int e = (at + i) * entry;
                            System.arraycopy(cache.array(), e, dst, off + i * Fingerprint.BYTES, Fingerprint.BYTES);
                            if (hashes != null) {
                                hashes[hashOff + 2 * i] = cache.getLong(e + Fingerprint.BYTES);
                                hashes[hashOff + 2 * i + 1] = cache.getLong(e + Fingerprint.BYTES + 8);
                            }
                        }
                    }
                    lbn += n;
                    count -= n;
                    off += n * Fingerprint.BYTES;
                    hashOff += 2 * n;
                }
            }

            private void fill(long lbn, int entry) {
                int n = (int) Math.min(IO_BUFFER / entry, header.blockCount() - lbn);
                cache.clear().limit(n * entry);
                try {
                    readFully(ch, cache, (version == FORMAT_VERSION ? HEADER_BYTES : HEADER_BYTES_V2) + lbn * entry);
                } catch (IOException e) {
                    throw IoReasons.localIo("cannot read state file", file, e, "delete the state file to force a full backup");
                }
                cacheFirstLbn = lbn;
                cacheCount = n;
            }
        }
    }

    /**
     * Writes the state of a snapshot being made: entries in LBN order while scanning, header at
     * {@link #commit}. Until then the final file is untouched. Not thread-safe.
     */
    public static final class Writer implements AutoCloseable {
        private final Path finalPath;
        private final Path tempPath;
        private final FileChannel ch;
        private final int blockSize;
        private final long volumeBytes;
        private final long blockCount;
        private final ChangeHashes changeHashes; // null: format 1
        private final int headerBytes;
        private final ByteBuffer buf = ByteBuffer.allocate(IO_BUFFER);
        private final CRC32C crc = new CRC32C();
        private long[] hashScratch = new long[0];
        private long written; // entries appended so far
        private long filePos;
        private boolean done;
        private final TempFileGuard guard; // an interrupted backup leaves no temporary state file

        private Writer(Path finalPath, TempFileGuard guard, FileChannel ch, int blockSize, long volumeBytes,
                       ChangeHashes changeHashes) {
            this.finalPath = finalPath;
            this.tempPath = guard.path();
            this.guard = guard;
            this.ch = ch;
            this.blockSize = blockSize;
            this.volumeBytes = volumeBytes;
            this.blockCount = ProtocolLimits.blockCount(volumeBytes, blockSize);
            this.changeHashes = changeHashes;
            this.headerBytes = changeHashes == null ? HEADER_BYTES : HEADER_BYTES_V2;
            this.filePos = headerBytes;
        }

        /** Starts a new format 1 state (fingerprints only) for {@code finalPath}, in a temporary file in the same directory. */
        public static Writer create(Path finalPath, int blockSize, long volumeBytes) {
            return create(finalPath, blockSize, volumeBytes, null);
        }

        /** Like {@link #create(Path, int, long)}; format 2 with these change-hash fields unless {@code changeHashes} is null. */
        public static Writer create(Path finalPath, int blockSize, long volumeBytes, ChangeHashes changeHashes) {
            try {
                StateDirectory.createPrivate(finalPath.getParent());
                TempFileGuard guard = TempFileGuard.create(finalPath.getParent(), tempPrefix(finalPath), TEMP_SUFFIX,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                FileChannel ch = null;
                try {
                    ch = FileChannel.open(guard.path(), StandardOpenOption.WRITE);
                    guard.lock(ch); // held until commit renamed the file or close deleted it (LeftoverTempFiles)
                    return new Writer(finalPath, guard, ch, blockSize, volumeBytes, changeHashes);
                } catch (IOException | RuntimeException e) {
                    closeQuietly(ch);
                    Files.deleteIfExists(guard.path());
                    guard.release();
                    throw e;
                }
            } catch (IOException e) {
                throw IoReasons.localIo("cannot create a state file in", finalPath.getParent(), e,
                        "check that --state-dir is writable");
            }
        }

        /**
         * Removes the temporary files that backups of {@code finalPath}'s volume killed by SIGKILL left
         * beside it (never a live run's: {@link LeftoverTempFiles}), one notice per file.
         */
        public static List<LeftoverTempFiles.Removed> removeLeftovers(Path finalPath, String volume, Consumer<String> notices) {
            return LeftoverTempFiles.remove(finalPath.getParent(), tempPrefix(finalPath), TEMP_SUFFIX,
                    "a backup of volume " + volume, notices);
        }

        private static String tempPrefix(Path finalPath) {
            return finalPath.getFileName() + ".";
        }

        /** Entries written so far (= the next LBN expected). */
        public long written() {
            return written;
        }

        /** Appends {@code count} fingerprints from {@code src} at {@code off}, for the next LBNs (change hashes unknown). */
        public void append(byte[] src, int off, int count) {
            append(src, off, null, 0, count);
        }

        /**
         * Appends {@code count} fingerprints from {@code src} at {@code off} for the next LBNs, with
         * their change hashes from {@code hashes} at {@code hashOff} (two longs per LBN; null:
         * unknown). A format 1 writer drops the change hashes.
         */
        public void append(byte[] src, int off, long[] hashes, int hashOff, int count) {
            if (written + count > blockCount) {
                throw new IllegalStateException("state would exceed " + blockCount + " blocks");
            }
            if (changeHashes == null) {
                int len = count * Fingerprint.BYTES;
                while (len > 0) {
                    int n = Math.min(len, buf.remaining());
                    buf.put(src, off, n);
                    off += n;
                    len -= n;
                    if (!buf.hasRemaining()) {
                        flush();
                    }
                }
            } else {
                for (int i = 0; i < count; i++) {
                    if (buf.remaining() < ENTRY_BYTES_V2) {
                        flush();
                    }
                    buf.put(src, off + i * Fingerprint.BYTES, Fingerprint.BYTES);
                    buf.putLong(hashes == null ? 0 : hashes[hashOff + 2 * i]);
                    buf.putLong(hashes == null ? 0 : hashes[hashOff + 2 * i + 1]);
                }
            }
            written += count;
        }

        /** Appends the previous state's entries of the next {@code count} LBNs (they did not change). */
        public void copyFrom(PreviousState prev, long count, byte[] scratch) {
            int per = scratch.length / Fingerprint.BYTES;
            if (hashScratch.length < 2 * per) {
                hashScratch = new long[2 * per];
            }
            while (count > 0) {
                int n = (int) Math.min(per, count);
                prev.read(written, n, scratch, 0, hashScratch, 0);
                append(scratch, 0, hashScratch, 0, n);
                count -= n;
            }
        }

        private void flush() {
            buf.flip();
            crc.update(buf.array(), 0, buf.limit());
            try {
                while (buf.hasRemaining()) {
                    filePos += ch.write(buf, filePos);
                }
            } catch (IOException e) {
                throw ioFailure(e);
            }
            buf.clear();
        }

        /** {@link #commit(long, long, long)} with the snapshot's identity unknown. */
        public void commit(long sequence, long committedAtMillis) {
            commit(sequence, committedAtMillis, 0);
        }

        /**
         * Completes the file for committed snapshot {@code sequence} of identity {@code snapshotId}
         * (0: unknown): header, fsync, atomic rename over the final path, directory fsync. Every LBN
         * must have been written.
         */
        public void commit(long sequence, long committedAtMillis, long snapshotId) {
            if (written != blockCount) {
                throw new IllegalStateException("state has " + written + " of " + blockCount + " fingerprints");
            }
            flush();
            ByteBuffer h = ByteBuffer.allocate(headerBytes);
            h.putInt(0, MAGIC).putInt(8, blockSize).putLong(16, volumeBytes)
                    .putLong(24, blockCount).putLong(32, sequence).putLong(40, committedAtMillis).putInt(48, (int) crc.getValue());
            if (changeHashes == null) {
                h.putShort(4, (short) FORMAT_VERSION).putLong(SNAPSHOT_ID_OFFSET_V1, snapshotId);
            } else {
                h.putShort(4, (short) FORMAT_VERSION_2).putShort(6, (short) KIND_XXH3_128)
                        .putInt(12, changeHashes.backupsSinceRehash()).putLong(56, changeHashes.rehashedAtMillis())
                        .putLong(64, changeHashes.seed()).putLong(SNAPSHOT_ID_OFFSET_V2, snapshotId);
            }
            CRC32C hc = new CRC32C();
            hc.update(h.array(), 0, headerBytes - 4);
            h.putInt(headerBytes - 4, (int) hc.getValue());
            try {
                int pos = 0;
                while (h.hasRemaining()) {
                    pos += ch.write(h, pos);
                }
                ch.force(true);
                // renamed before the channel closes: closing drops the lock that keeps other runs' hands off
                try {
                    Files.move(tempPath, finalPath, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tempPath, finalPath, StandardCopyOption.REPLACE_EXISTING);
                }
                ch.close();
                GuardedReplace.fsyncDirectory(finalPath.getParent());
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
            try {
                Files.deleteIfExists(tempPath); // still locked: no other run looks at it meanwhile
            } catch (IOException ignored) {
                // a stray temp file is harmless: it never has the final name, and a later backup removes it
            }
            closeQuietly(ch);
            guard.release();
        }
    }
}
