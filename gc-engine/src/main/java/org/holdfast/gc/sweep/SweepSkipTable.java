package org.holdfast.gc.sweep;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.holdfast.gc.AtomicFileReplace;
import org.holdfast.gc.GcStoreException;

/**
 * The sweep's skip table on disk, so that the first sweep after a restart need not read the whole
 * GMA: per chunk, whether a sweep has seen it, the earliest expiry among its unreferenced,
 * unpinned, unfreed blocks, and what it kept. Valid as of {@code validLsn}: every GMA update with
 * a lower or equal LSN is accounted for (a chunk updated since its visit is stored as unseen).
 *
 * <pre>
 * file "sweep-skip" in the GC directory, big-endian:
 *   [0..3]   magic+version 0x48534B01
 *   [4..11]  valid LSN
 *   [12..15] chunk count n (at most {@link #MAX_CHUNKS})
 *   n × 25 bytes: [0] 1 if seen, else 0  [1..8] earliest pending expiry (epoch ms; Long.MAX_VALUE: none)
 *                 [9..24] blocks kept: referenced, unexpired, pinned, already freed (4 × u32)
 *   [last 4] CRC32C of everything before
 * </pre>
 * Written to a temporary file, forced, renamed over the old one, directory forced: a crash leaves
 * the old table or the new one. Whoever loads it must check it against the log (see
 * {@link Sweeper}): a table that is stale, lost or damaged must only cost reads.
 */
final class SweepSkipTable {
    static final String FILE = "sweep-skip";
    static final int MAGIC_V1 = 0x48534B01;
    /** More chunks than this (about 550 G blocks) in a table is damage, not data. */
    static final int MAX_CHUNKS = 1 << 26;
    private static final int HEADER = 16;
    private static final int ENTRY = 25;
    private static final String STORE = "sweep-skip";

    /** The table's contents; {@code kept} holds 4 counts per chunk. */
    record Contents(long validLsn, boolean[] known, long[] pendingEt, long[] kept) {
    }

    private SweepSkipTable() {
    }

    /** Reads the table; null if there is none. @throws GcStoreException if it cannot be read or fails its checks */
    static Contents read(Path dir) {
        Path p = dir.resolve(FILE);
        if (!Files.exists(p)) {
            return null;
        }
        byte[] b;
        try {
            long size = Files.size(p);
            if (size < HEADER + 4 || size > HEADER + 4 + (long) ENTRY * MAX_CHUNKS) {
                throw new GcStoreException(STORE, p, null, "size " + size + " out of range");
            }
            b = Files.readAllBytes(p);
        } catch (IOException e) {
            throw new GcStoreException(STORE, p, null, "cannot read: " + e.getMessage(), e);
        }
        ByteBuffer bb = ByteBuffer.wrap(b);
        CRC32C crc = new CRC32C();
        crc.update(b, 0, b.length - 4);
        if (bb.getInt(0) != MAGIC_V1 || bb.getInt(b.length - 4) != (int) crc.getValue()) {
            throw new GcStoreException(STORE, p, null, "bad magic or checksum");
        }
        int n = bb.getInt(12);
        if (n < 0 || n > MAX_CHUNKS || b.length != HEADER + (long) ENTRY * n + 4) {
            throw new GcStoreException(STORE, p, null, "chunk count " + n + " does not match the size " + b.length);
        }
        boolean[] known = new boolean[n];
        long[] et = new long[n];
        long[] kept = new long[4 * n];
        for (int i = 0; i < n; i++) {
            int o = HEADER + ENTRY * i;
            known[i] = b[o] == 1;
            et[i] = bb.getLong(o + 1);
            for (int k = 0; k < 4; k++) {
                kept[4 * i + k] = Integer.toUnsignedLong(bb.getInt(o + 9 + 4 * k));
            }
        }
        return new Contents(bb.getLong(4), known, et, kept);
    }

    /** Writes the first {@code n} chunks' entries atomically. */
    static void write(Path dir, long validLsn, int n, boolean[] known, long[] pendingEt, long[] kept) {
        if (n > MAX_CHUNKS) {
            throw new IllegalArgumentException("skip table of " + n + " chunks exceeds " + MAX_CHUNKS);
        }
        ByteBuffer bb = ByteBuffer.allocate(HEADER + ENTRY * n + 4);
        bb.putInt(MAGIC_V1).putLong(validLsn).putInt(n);
        for (int i = 0; i < n; i++) {
            bb.put((byte) (known[i] ? 1 : 0)).putLong(pendingEt[i]);
            for (int k = 0; k < 4; k++) {
                bb.putInt((int) Math.min(0xFFFF_FFFFL, kept[4 * i + k]));
            }
        }
        CRC32C crc = new CRC32C();
        crc.update(bb.array(), 0, bb.position());
        bb.putInt((int) crc.getValue());
        bb.flip();
        AtomicFileReplace.write(dir, FILE, bb, STORE);
    }
}
