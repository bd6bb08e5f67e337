package org.holdfast.server.container;

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
import java.util.zip.CRC32C;
import org.holdfast.server.store.StoreException;

/**
 * The on-disk form of one {@link Container}: {@code containers/%08x.hfc}, big-endian.
 *
 * <pre>
 * offset size  field
 *      0    4  magic "HFCT" (0x48464354)
 *      4    2  format version (1)
 *      6    2  header bytes (64)
 *      8    4  container id
 *     12    4  n: fingerprints (offsets 0..n-1), n &lt;= MAX_FINGERPRINTS
 *     16    4  s: segment slots (live and free), s &lt;= n*K + 1
 *     20    1  K
 *     21    3  reserved (0)
 *     24    8  purged-through stale sequence number
 *     32    4  U_container when written
 *     36   28  reserved (0)
 *     64 32*n  fingerprints (RFI order)
 *         8*n  PBNs (0 = purged)
 *        24*s  segments by id: start u32, end u32, exact matches u32, flags u32 (bit 0 stable,
 *              bit 1 free slot, start = end = 0), LRU stamp u64
 *       4*n*K  SI: segment id per offset and slot, -1 empty
 *          4   CRC32C of every byte before it
 * </pre>
 *
 * A file that is short, has a bad magic, version or checksum, or breaks a limit is <em>absent</em>:
 * the engine forgets those fingerprints, which costs deduplication and never correctness. Files are
 * written to a temporary name, forced and renamed, so a crash leaves the old or the new file.
 */
public final class ContainerFile {
    /** "HFCT". */
    public static final int MAGIC = 0x48464354;
    /** Current format version. */
    public static final int VERSION = 1;
    /** Header bytes. */
    public static final int HEADER_BYTES = 64;
    private static final int SEGMENT_BYTES = 24;

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

    /** Serializes {@code c}; the caller holds at least its read lock. */
    public static byte[] encode(Container c) {
        int n = c.count();
        int k = c.k();
        int slots = c.segmentCapacity();
        int s = slots;
        int len = HEADER_BYTES + n * 40 + s * SEGMENT_BYTES + n * k * 4 + 4;
        ByteBuffer b = ByteBuffer.allocate(len).order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).putShort((short) VERSION).putShort((short) HEADER_BYTES).putInt(c.id()).putInt(n).putInt(s)
                .put((byte) k).put((byte) 0).putShort((short) 0).putLong(c.purgedSeq()).putInt(c.maxFingerprints());
        b.position(HEADER_BYTES);
        long[] w = c.wordsArray();
        for (int i = 0; i < n * 4; i++) {
            b.putLong(w[i]);
        }
        for (int off = 0; off < n; off++) {
            b.putLong(c.pbn(off));
        }
        for (int i = 0; i < slots; i++) {
            if (c.isLiveSegment(i)) {
                b.putInt(c.segmentStart(i)).putInt(c.segmentEnd(i)).putInt(c.exactMatches(i)).putInt(c.segmentFlags(i))
                        .putLong(c.lastUse(i));
            } else {
                b.putInt(0).putInt(0).putInt(0).putInt(Container.FLAG_DEAD).putLong(0);
            }
        }
        for (int i = 0; i < n * k; i++) {
            b.putInt(c.siAt(i));
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, len - 4);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /**
     * Parses a container; returns null if the bytes are not a whole, valid container of this format
     * (torn write, corruption, other version) or break a limit.
     */
    public static Container decode(byte[] data, int expectedId, int maxFingerprints) {
        if (data.length < HEADER_BYTES + 4) {
            return null;
        }
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length - 4);
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.BIG_ENDIAN);
        if (b.getInt(data.length - 4) != (int) crc.getValue()) {
            return null;
        }
        if (b.getInt() != MAGIC || b.getShort() != VERSION || b.getShort() != HEADER_BYTES) {
            return null;
        }
        int id = b.getInt();
        int n = b.getInt();
        int s = b.getInt();
        int k = b.get();
        b.position(24);
        long purged = b.getLong();
        int writtenMax = b.getInt();
        if (id != expectedId || n < 0 || n > Container.MAX_FINGERPRINTS || k < 1 || k > Container.MAX_K || s < 0
                || s > n * k + 1 || writtenMax < 1 || writtenMax > Container.MAX_FINGERPRINTS) {
            return null;
        }
        long expectedLen = HEADER_BYTES + n * 40L + (long) s * SEGMENT_BYTES + (long) n * k * 4 + 4;
        if (expectedLen != data.length) {
            return null;
        }
        int max = Math.max(maxFingerprints, n);
        b.position(HEADER_BYTES);
        long[] w = new long[n * 4];
        for (int i = 0; i < w.length; i++) {
            w[i] = b.getLong();
        }
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = b.getLong();
            if (p[i] < 0) {
                return null;
            }
        }
        int[] starts = new int[s];
        int[] ends = new int[s];
        int[] exact = new int[s];
        int[] flags = new int[s];
        long[] use = new long[s];
        for (int i = 0; i < s; i++) {
            starts[i] = b.getInt();
            ends[i] = b.getInt();
            exact[i] = b.getInt();
            flags[i] = b.getInt();
            use[i] = b.getLong();
            boolean dead = (flags[i] & Container.FLAG_DEAD) != 0;
            if (!dead && (starts[i] < 0 || ends[i] <= starts[i] || ends[i] > n)) {
                return null;
            }
        }
        int[] si = new int[n * k];
        for (int i = 0; i < si.length; i++) {
            si[i] = b.getInt();
            if (si[i] < -1 || si[i] >= s) {
                return null;
            }
        }
        Container c = new Container(id, max, k, Math.max(n, 1), Math.max(s, 1));
        c.restore(w, p, n, starts, ends, exact, flags, use, s, si, purged);
        return c;
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
        return HEADER_BYTES + n * 40 + (n * Container.MAX_K + 1) * SEGMENT_BYTES + n * Container.MAX_K * 4 + 4;
    }

    /** Reads container {@code id}'s file; null if absent, torn or invalid. */
    public static Container read(Path dir, int id, int maxFingerprints) {
        Path file = dir.resolve(fileName(id));
        try {
            long size = Files.size(file);
            if (size > maxFileBytes()) {
                return null;
            }
            return decode(Files.readAllBytes(file), id, maxFingerprints);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw StoreException.translate("container-store", file.toString(), Integer.toString(id), e);
        }
    }
}
