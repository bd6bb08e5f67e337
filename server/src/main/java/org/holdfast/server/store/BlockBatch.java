package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.Fingerprint;

/**
 * A caller-owned, reusable buffer that {@link DataStore#readBatch} fills with a run of blocks as
 * stored, read with one positional read per stretch of adjacent records. Each record is checked
 * (record header and CRC32C) like {@link DataStore#read}. A frame record is read once however many
 * of its members the run names, in any order; such a block has codec
 * {@link FormatVersions#CODEC_FRAME}, its stored bytes are the whole zstd frame, and
 * {@link #decode} gives its own bytes (decoding each frame once while its members come in a row).
 * One per reading thread; reusing it keeps the restore path free of per-block allocations and
 * per-block system calls.
 */
public final class BlockBatch {
    byte[] buf;
    ByteBuffer view;
    final long[] pbn;
    final int[] logId;
    final long[] offset;
    // the location's length field (FrameFormat.memberLocation for a frame member)
    final int[] location;
    // where block i's record header lies in buf (members of one frame share it)
    final int[] at;
    // index of block i in its frame, -1 for a block record
    final int[] member;
    final boolean[] fromPending;
    final byte[] fingerprints;
    final CRC32C crc = new CRC32C();
    final byte[] locationKey = new byte[8];
    final byte[] locationValue = new byte[LocationIndex.VALUE_BYTES];
    // the distinct records read: where in buf, which log and offset, how long, the first block naming it
    final int[] recAt;
    final int[] recLog;
    final long[] recOffset;
    final int[] recLength;
    final int[] recFirst;
    int records;
    int count;
    // the frame decoded into frame (its record position in buf), -1 if none since the last read
    private byte[] frame;
    private int decodedAt = -1;

    /**
     * A batch of at most {@code maxBlocks} blocks in {@code bufferBytes} of record buffer; the buffer
     * is raised to hold at least one record of {@code maxStoredBytes}, and grows once to hold any
     * record the first time a frame record does not fit it alone.
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
        location = new int[maxBlocks];
        at = new int[maxBlocks];
        member = new int[maxBlocks];
        fromPending = new boolean[maxBlocks];
        fingerprints = new byte[maxBlocks * Fingerprint.BYTES];
        recAt = new int[maxBlocks];
        recLog = new int[maxBlocks];
        recOffset = new long[maxBlocks];
        recLength = new int[maxBlocks];
        recFirst = new int[maxBlocks];
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

    /** {@link FormatVersions#CODEC_RAW} or {@link FormatVersions#CODEC_ZSTD}, or {@link FormatVersions#CODEC_FRAME} for a frame member. */
    public int codec(int i) {
        return member[i] >= 0 ? FormatVersions.CODEC_FRAME : RecordFormat.codec(buf, at[i]);
    }

    /** The block's size (a frame member's too). */
    public int rawLength(int i) {
        return member[i] >= 0 ? FrameFormat.blockSize(buf, at[i]) : RecordFormat.rawLength(buf, at[i]);
    }

    /** The array holding every block's stored bytes (at {@link #dataOffset}). */
    public byte[] data() {
        return buf;
    }

    /** Where block i's stored bytes start: a frame member's is its frame's zstd payload (member map excluded). */
    public int dataOffset(int i) {
        return at[i] + (member[i] >= 0 ? FrameFormat.payloadOffset(buf, at[i]) : RECORD_HEADER_BYTES);
    }

    /** Bytes of block i's stored form: a frame member's is its frame's zstd payload. */
    public int storedLength(int i) {
        return FrameFormat.recordStored(location[i]) - (dataOffset(i) - at[i] - RECORD_HEADER_BYTES);
    }

    /** Members of block i's frame (1 for a block record). */
    public int frameMembers(int i) {
        return member[i] >= 0 ? FrameFormat.members(buf, at[i]) : 1;
    }

    /** Index of block i in its frame (0 for a block record). */
    public int memberIndex(int i) {
        return Math.max(0, member[i]);
    }

    /** The log of block i's record: blocks with the same log and {@link #frameOffset} share a frame. */
    public int frameLogId(int i) {
        return logId[i];
    }

    /** The offset of block i's record in its log. */
    public long frameOffset(int i) {
        return offset[i];
    }

    /**
     * Writes block i's own bytes ({@link #rawLength}) to {@code dst} at {@code dstOff}, decoding its
     * frame unless it is the frame decoded last.
     *
     * @throws org.holdfast.common.compress.CorruptPayloadException if the stored bytes do not decode
     */
    public void decode(int i, BlockCodec codec, byte[] dst, int dstOff) {
        int bs = rawLength(i);
        if (member[i] < 0) {
            codec.decode(codec(i), buf, dataOffset(i), storedLength(i), dst, dstOff, bs);
            return;
        }
        if (decodedAt != at[i]) {
            int raw = FrameFormat.rawLength(buf, at[i]);
            if (frame == null) {
                frame = new byte[FormatVersions.FRAME_MAX_RAW];
            }
            decodedAt = -1;
            codec.decompress(buf, dataOffset(i), storedLength(i), frame, 0, raw);
            decodedAt = at[i];
        }
        System.arraycopy(frame, member[i] * bs, dst, dstOff, bs);
    }

    /** Empties the batch before blocks read elsewhere are put in one by one ({@link #put}): a home other than a local DataStore fills it so. */
    public void clear() {
        count = 0;
        records = 0;
        refilled();
    }

    /**
     * Adds one block read elsewhere (a worker's DATA_READ answer), in its stored form ({@link FormatVersions#CODEC_RAW} or
     * {@link FormatVersions#CODEC_ZSTD}; never a frame member, which a worker sends decoded), with its fingerprint; false,
     * nothing added, if the batch is full or its buffer cannot hold it (an empty batch holds any block of its size).
     */
    public boolean put(long blockPbn, byte[] fps, int fpOff, int codec, int rawLength, byte[] src, int off, int storedLength) {
        if (codec != FormatVersions.CODEC_RAW && codec != FormatVersions.CODEC_ZSTD) {
            throw new IllegalArgumentException("a block put in a batch is raw or zstd, not codec " + codec);
        }
        int pos = count == 0 ? 0 : at[count - 1] + RECORD_HEADER_BYTES + location[count - 1];
        if (count == pbn.length || pos + RECORD_HEADER_BYTES + storedLength > buf.length) {
            return false;
        }
        // the header fields the accessors read (codec, raw length); the rest of the header is not used for such a block
        java.util.Arrays.fill(buf, pos, pos + RECORD_HEADER_BYTES, (byte) 0);
        buf[pos + 4] = (byte) codec;
        Bytes.putInt(buf, pos + 16, rawLength);
        System.arraycopy(src, off, buf, pos + RECORD_HEADER_BYTES, storedLength);
        int i = count++;
        pbn[i] = blockPbn;
        logId[i] = -1;
        offset[i] = -1;
        location[i] = storedLength;
        at[i] = pos;
        member[i] = -1;
        fromPending[i] = false;
        System.arraycopy(fps, fpOff, fingerprints, i * Fingerprint.BYTES, Fingerprint.BYTES);
        return true;
    }

    /** Raises the buffer to hold any record (one allocation, the first time a frame record does not fit it alone). */
    void growForAnyRecord() {
        buf = new byte[RECORD_HEADER_BYTES + FormatVersions.MAX_STORED_BYTES];
        view = ByteBuffer.wrap(buf);
    }

    /** Forgets the decoded frame: the buffer is about to be refilled. */
    void refilled() {
        decodedAt = -1;
    }

    /** The array holding every block's fingerprint (at {@link #fingerprintOffset}). */
    public byte[] fingerprints() {
        return fingerprints;
    }

    public int fingerprintOffset(int i) {
        return i * Fingerprint.BYTES;
    }
}
