package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.holdfast.common.id.Fingerprint;

/**
 * A caller-owned, reusable buffer that {@link DataStore#read} fills with one block as stored: its
 * codec, stored bytes (at {@link #dataOffset()} of {@link #data()}), raw length and fingerprint.
 * A member of a frame record comes decoded, as {@link FormatVersions#CODEC_RAW}: the buffer keeps
 * the last frame it decoded, so a scan in PBN order decodes each frame once. One per reading
 * thread; reusing it keeps the restore path free of per-block allocations.
 */
public final class StoredBlock {
    final byte[] record;
    final ByteBuffer view;
    final byte[] fingerprint = new byte[Fingerprint.BYTES];
    final CRC32C crc = new CRC32C();
    final byte[] locationKey = new byte[8];
    final byte[] locationValue = new byte[LocationIndex.VALUE_BYTES];
    long pbn;
    int codec;
    int storedLength;
    int rawLength;
    int logId;
    long offset;
    // the location's length field (a frame member's carries its frame's size, see FrameFormat)
    int location;
    // where data() and dataOffset() point: the record buffer, or the decoded frame
    byte[] data;
    int dataOffset = RECORD_HEADER_BYTES;
    // the decoded frame (made at the first frame read) and which record it is: log, offset, store relocation epoch
    byte[] frame;
    int frameLog = -1;
    long frameOffset = -1;
    long frameEpoch = -1;
    final byte[] digest = new byte[Fingerprint.BYTES];

    /** A buffer for blocks whose stored form is at most {@code maxStoredBytes}. */
    public StoredBlock(int maxStoredBytes) {
        if (maxStoredBytes <= 0 || maxStoredBytes > FormatVersions.MAX_STORED_BYTES) {
            throw new IllegalArgumentException("maxStoredBytes must be in 1.." + FormatVersions.MAX_STORED_BYTES);
        }
        record = new byte[RECORD_HEADER_BYTES + maxStoredBytes];
        view = ByteBuffer.wrap(record);
        data = record;
    }

    /** A buffer big enough for any block. */
    public StoredBlock() {
        this(FormatVersions.MAX_STORED_BYTES);
    }

    public long pbn() {
        return pbn;
    }

    /** {@link FormatVersions#CODEC_RAW} or {@link FormatVersions#CODEC_ZSTD}; a frame member reads as raw. */
    public int codec() {
        return codec;
    }

    public byte[] data() {
        return data;
    }

    public int dataOffset() {
        return dataOffset;
    }

    /**
     * After a read, the bytes at {@link #dataOffset()}; after a fingerprint lookup only, the stored
     * bytes the block accounts for (a frame member: its share of the frame).
     */
    public int storedLength() {
        return storedLength;
    }

    public int rawLength() {
        return rawLength;
    }

    /** The block's 32-byte fingerprint (valid after a read or a fingerprint lookup). */
    public byte[] fingerprint() {
        return fingerprint;
    }

    int capacity() {
        return record.length - RECORD_HEADER_BYTES;
    }
}
