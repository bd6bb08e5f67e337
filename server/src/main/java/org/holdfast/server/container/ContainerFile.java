package org.holdfast.server.container;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.holdfast.server.store.StoreException;

/**
 * The on-disk form of one {@link Container}: {@code containers/%08x.hfc}, big-endian.
 *
 * <pre>
 * offset size  field
 *      0    4  magic "HFCT" (0x48464354)
 *      4    2  format version (2; 1 is still read)
 *      6    2  header bytes (64)
 *      8    4  container id
 *     12    4  n: fingerprints (offsets 0..n-1), n &lt;= MAX_FINGERPRINTS
 *     16    4  s: segment slots (live and free), s &lt;= n*K + 1
 *     20    1  K
 *     21    3  reserved (0)
 *     24    8  purged-through stale sequence number
 *     32    4  U_container when written
 *     36    4  m: bytes of the columns once decompressed, m &lt;= ContainerColumns.maxBytes(n, s, K)
 *     40    4  c: bytes of the zstd frame, the file is 64 + 32*n + c + 4 bytes
 *     44   20  reserved (0)
 *     64 32*n  fingerprints (RFI order), raw: a load copies them straight
 *          c   one zstd frame of the m bytes of {@link ContainerColumns}: PBNs, segments, SI
 *          4   CRC32C of every byte before it
 * </pre>
 *
 * Version 1 had 28 reserved bytes from offset 36 and, after the fingerprints, the columns raw:
 * 8*n PBNs (0 = purged); 24*s segments by id (start u32, end u32, exact matches u32, flags u32 with
 * bit 0 stable and bit 1 free slot, LRU stamp u64); 4*n*K SI entries (segment id, -1 empty). It
 * spent 48 bytes per fingerprint at K=2 where version 2 spends about 32.
 *
 * <p>A file that is short, has a bad magic, version or checksum, a length that does not add up, a
 * frame that does not decompress to exactly m bytes, or breaks a limit is <em>absent</em>: the
 * engine forgets those fingerprints, which costs deduplication and never correctness. Every length
 * is checked before anything is allocated from it. Files are written to a temporary name, forced
 * and renamed, so a crash leaves the old or the new file.
 */
public final class ContainerFile {
    /** "HFCT". */
    public static final int MAGIC = 0x48464354;
    /** Format version written. */
    public static final int VERSION = 2;
    /** The first format, still read. */
    public static final int VERSION_1 = 1;
    /** Header bytes. */
    public static final int HEADER_BYTES = 64;
    private static final int FINGERPRINT_BYTES = 32;
    private static final int V1_SEGMENT_BYTES = 24;
    /** zstd level of the columns: they are small, so a higher level costs little and loads as fast. */
    private static final int COLUMN_LEVEL = 3;

    private ContainerFile() {
    }

    /** File name of container {@code id}. */
    public static String fileName(int id) {
        return String.format("%08x.hfc", id);
    }

    /** Container id from a file name, or -1 if it is not a container file. */
    public static int idOf(String fileName) {
        if (fileName.length() != 12 || !fileName.endsWith(".hfc")) {
            return -1;
        }
        try {
            return (int) Long.parseLong(fileName.substring(0, 8), 16);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Serializes {@code c} in the current version; the caller holds at least its read lock. */
    public static byte[] encode(Container c) {
        int n = c.count();
        byte[] columns = new byte[(int) ContainerColumns.maxBytes(n, c.segmentCapacity(), c.k())];
        int m = ContainerColumns.encode(c, columns);
        int frameAt = HEADER_BYTES + n * FINGERPRINT_BYTES;
        int bound = (int) Zstd.compressBound(m);
        byte[] out = new byte[frameAt + bound + 4];
        long packed = Zstd.compressByteArray(out, frameAt, bound, columns, 0, m, COLUMN_LEVEL);
        if (Zstd.isError(packed)) {
            throw new IllegalStateException("container " + c.id() + ": zstd failed: " + Zstd.getErrorName(packed));
        }
        int len = frameAt + (int) packed + 4;
        ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).putShort((short) VERSION).putShort((short) HEADER_BYTES).putInt(c.id()).putInt(n)
                .putInt(c.segmentCapacity()).put((byte) c.k()).put((byte) 0).putShort((short) 0).putLong(c.purgedSeq())
                .putInt(c.maxFingerprints()).putInt(m).putInt((int) packed);
        b.position(HEADER_BYTES);
        b.asLongBuffer().put(c.wordsArray(), 0, n * 4);
        CRC32C crc = new CRC32C();
        crc.update(out, 0, len - 4);
        b.putInt(len - 4, (int) crc.getValue());
        return Arrays.copyOf(out, len);
    }

    /**
     * Parses a container of version 1 or 2; returns null if the bytes are not a whole, valid
     * container (torn write, corruption, other version) or break a limit.
     */
    static Container decode(byte[] data, int expectedId, int maxFingerprints) {
        return decode(data, expectedId, maxFingerprints, Container.MAX_K);
    }

    /**
     * As {@link #decode(byte[], int, int)}, refusing a K above {@code maxK} (the store's): a version 2
     * file's columns are compressed, so its length no longer bounds the arrays its header declares,
     * and a forged K of 16 with n K + 1 segment slots would make a small file allocate tens of times
     * its size. A container written under a larger K than the store's now reads as absent (its
     * fingerprints are forgotten, which costs deduplication only).
     */
    public static Container decode(byte[] data, int expectedId, int maxFingerprints, int maxK) {
        if (data.length < HEADER_BYTES + 4) {
            return null;
        }
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length - 4);
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.BIG_ENDIAN);
        if (b.getInt(data.length - 4) != (int) crc.getValue()) {
            return null;
        }
        int version = b.getShort(4);
        if (b.getInt(0) != MAGIC || b.getShort(6) != HEADER_BYTES || (version != VERSION && version != VERSION_1)) {
            return null;
        }
        int id = b.getInt(8);
        int n = b.getInt(12);
        int s = b.getInt(16);
        int k = b.get(20);
        long purged = b.getLong(24);
        int writtenMax = b.getInt(32);
        if (id != expectedId || n < 0 || n > Container.MAX_FINGERPRINTS || k < 1 || k > Math.min(maxK, Container.MAX_K) || s < 0
                || s > n * k + 1 || writtenMax < 1 || writtenMax > Container.MAX_FINGERPRINTS) {
            return null;
        }
        // Every length adds up before anything is allocated from it.
        long fixed = HEADER_BYTES + (long) n * FINGERPRINT_BYTES + 4;
        int m = b.getInt(36);
        int packed = b.getInt(40);
        if (version == VERSION_1 ? fixed + 8L * n + (long) s * V1_SEGMENT_BYTES + 4L * n * k != data.length
                : m < 0 || m > ContainerColumns.maxBytes(n, s, k) || packed <= 0 || fixed + packed != data.length) {
            return null;
        }
        long[] w = new long[n * 4];
        b.position(HEADER_BYTES);
        b.asLongBuffer().get(w);
        long[] p = new long[n];
        int[] starts = new int[s];
        int[] ends = new int[s];
        int[] exact = new int[s];
        int[] flags = new int[s];
        long[] use = new long[s];
        int[] si = new int[n * k];
        int columnsAt = HEADER_BYTES + n * FINGERPRINT_BYTES;
        boolean ok = version == VERSION_1 ? readV1Columns(b, columnsAt, n, p, starts, ends, exact, flags, use, si)
                : readColumns(data, columnsAt, packed, m, n, k, p, starts, ends, exact, flags, use, si);
        if (!ok) {
            return null;
        }
        Container c = new Container(id, Math.max(maxFingerprints, n), k, Math.max(n, 1), Math.max(s, 1));
        c.restore(w, p, n, starts, ends, exact, flags, use, s, si, purged);
        return c;
    }

    /** Version 2: decompresses exactly {@code m} bytes from the frame and decodes them. */
    private static boolean readColumns(byte[] data, int at, int packed, int m, int n, int k, long[] p, int[] starts,
            int[] ends, int[] exact, int[] flags, long[] use, int[] si) {
        if (Zstd.getFrameContentSize(data, at, packed) != m) {
            return false;
        }
        byte[] columns = new byte[m];
        try {
            if (Zstd.decompressByteArray(columns, 0, m, data, at, packed) != m) {
                return false;
            }
        } catch (ZstdException e) {
            return false;
        }
        return ContainerColumns.decode(columns, m, n, k, p, starts, ends, exact, flags, use, si);
    }

    /** Version 1: the columns raw, big-endian. */
    private static boolean readV1Columns(ByteBuffer b, int at, int n, long[] p, int[] starts, int[] ends,
            int[] exact, int[] flags, long[] use, int[] si) {
        b.position(at);
        for (int i = 0; i < n; i++) {
            p[i] = b.getLong();
            if (p[i] < 0) {
                return false;
            }
        }
        int s = starts.length;
        for (int i = 0; i < s; i++) {
            starts[i] = b.getInt();
            ends[i] = b.getInt();
            exact[i] = b.getInt();
            flags[i] = b.getInt();
            use[i] = b.getLong();
            boolean dead = (flags[i] & Container.FLAG_DEAD) != 0;
            if (!dead && (starts[i] < 0 || ends[i] <= starts[i] || ends[i] > n)) {
                return false;
            }
        }
        for (int i = 0; i < si.length; i++) {
            si[i] = b.getInt();
            if (si[i] < -1 || si[i] >= s) {
                return false;
            }
        }
        return true;
    }

    /** Writes {@code data} as container {@code id} under {@code dir}: temp file, force, atomic rename. */
    public static void write(Path dir, int id, byte[] data) {
        Path target = dir.resolve(fileName(id));
        // A name of its own per write: two writers of one id must never rename each other's file.
        Path tmp = dir.resolve(fileName(id) + "." + Thread.currentThread().getId() + "-" + System.nanoTime() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(data);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        } catch (IOException e) {
            throw StoreException.translate("container-store", tmp.toString(), Integer.toString(id), e);
        }
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            try {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e2) {
                throw StoreException.translate("container-store", target.toString(), Integer.toString(id), e2);
            }
        } catch (IOException e) {
            throw StoreException.translate("container-store", target.toString(), Integer.toString(id), e);
        }
    }

    /** Largest file a container may have; checked before reading one into memory. */
    public static long maxFileBytes() {
        long n = Container.MAX_FINGERPRINTS;
        int k = Container.MAX_K;
        long fixed = HEADER_BYTES + n * FINGERPRINT_BYTES + 4;
        long v1 = fixed + n * 8 + (n * k + 1) * V1_SEGMENT_BYTES + n * k * 4;
        return Math.max(v1, fixed + Zstd.compressBound(ContainerColumns.maxBytes((int) n, (int) n * k + 1, k)));
    }

    /** Reads container {@code id}'s file; null if absent, torn, invalid or of a K above {@code maxK}. */
    public static Container read(Path dir, int id, int maxFingerprints, int maxK) {
        Path file = dir.resolve(fileName(id));
        try {
            long size = Files.size(file);
            if (size > maxFileBytes()) {
                return null;
            }
            return decode(Files.readAllBytes(file), id, maxFingerprints, maxK);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw StoreException.translate("container-store", file.toString(), Integer.toString(id), e);
        }
    }
}
