package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.holdfast.common.id.Fingerprint;

/**
 * A caller-owned, reusable buffer that {@link DataStore#readBatch} fills with a run of blocks as
 * stored, read with one positional read per stretch of adjacent records. Each block is checked
 * (record header and CRC32C) like {@link DataStore#read}. One per reading thread; reusing it keeps
 * the restore path free of per-block allocations and per-block system calls.
 */
public final class BlockBatch {
    final byte[] buf;
    final ByteBuffer view;
    final long[] pbn;
    final int[] logId;
    final long[] offset;
    final int[] storedLength;
    final int[] at;
    final boolean[] fromPending;
    final byte[] fingerprints;
    final CRC32C crc = new CRC32C();
    final byte[] locationKey = new byte[8];
    final byte[] locationValue = new byte[LocationIndex.VALUE_BYTES];
    int count;

    /**
     * A batch of at most {@code maxBlocks} blocks in {@code bufferBytes} of record buffer; the buffer
     * is raised to hold at least one record of {@code maxStoredBytes}.
     */
    public BlockBatch(int maxBlocks, int bufferBytes, int maxStoredBytes) {
        if (maxBlocks < 1 || maxBlocks > 1 << 16) {
            throw new IllegalArgumentException("maxBlocks must be in 1..65536, got " + maxBlocks);
        }
        if (maxStoredBytes <= 0 || maxStoredBytes > FormatVersions.MAX_STORED_BYTES) {
            throw new IllegalArgumentException("maxStoredBytes must be in 1.." + FormatVersions.MAX_STORED_BYTES);
        }
        buf = new byte[Math.max(bufferBytes, RECORD_HEADER_BYTES + maxStoredBytes)];
        view = ByteBuffer.wrap(buf);
        pbn = new long[maxBlocks];
        logId = new int[maxBlocks];
        offset = new long[maxBlocks];
        storedLength = new int[maxBlocks];
        at = new int[maxBlocks];
        fromPending = new boolean[maxBlocks];
        fingerprints = new byte[maxBlocks * Fingerprint.BYTES];
    }

    /** Blocks held after the last {@link DataStore#readBatch}. */
    public int count() {
        return count;
    }

    public int capacity() {
        return pbn.length;
    }

    public long pbn(int i) {
        return pbn[i];
    }

    /** {@link FormatVersions#CODEC_RAW} or {@link FormatVersions#CODEC_ZSTD}. */
    public int codec(int i) {
        return RecordFormat.codec(buf, at[i]);
    }

    public int rawLength(int i) {
        return RecordFormat.rawLength(buf, at[i]);
    }

    /** The array holding every block's stored bytes (at {@link #dataOffset}). */
    public byte[] data() {
        return buf;
    }

    public int dataOffset(int i) {
        return at[i] + RECORD_HEADER_BYTES;
    }

    public int storedLength(int i) {
        return storedLength[i];
    }

    /** The array holding every block's fingerprint (at {@link #fingerprintOffset}). */
    public byte[] fingerprints() {
        return fingerprints;
    }

    public int fingerprintOffset(int i) {
        return i * Fingerprint.BYTES;
    }
}
