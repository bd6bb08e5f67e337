package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.util.Arrays;
import java.util.zip.CRC32C;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.Fingerprint;

/**
 * Compaction's handling of one frame record: finds its live members among a log's
 * {@link LiveRecords}, and when some members are dead, decodes the frame, checks each live
 * member against its fingerprint and compresses the live ones (zstd level 1) into a new frame
 * whose first PBN is the first live member, with a member map unless the live members are
 * consecutive PBNs. If zstd does not pay (or the result would not fit a frame record), the frame
 * is copied as it is: dead bytes stay, nothing is lost. Owns a zstd codec: close it.
 */
final class FrameRepack implements AutoCloseable {
    private final BlockCodec codec = new BlockCodec(1);
    private final BlockHasher hasher = new BlockHasher();
    private final byte[] digest = new byte[Fingerprint.BYTES];
    private final int[] live = new int[FormatVersions.FRAME_MAX_MEMBERS];
    private final int[] index = new int[FormatVersions.FRAME_MAX_MEMBERS];
    private byte[] frame;
    private byte[] packed;
    private byte[] out;
    private int liveCount;
    private int members;
    private byte[] result;
    private int resultLength;

    /**
     * Collects the live members of the checked frame record in {@code rec} whose first live member
     * is record {@code i}, and sets {@code done} for each; null, or what is wrong.
     */
    String plan(byte[] rec, LiveRecords records, int i, boolean[] done) {
        members = FrameFormat.members(rec, 0);
        long first = FrameFormat.first(rec, 0);
        long end = first + (FrameFormat.hasMap(rec, 0) ? Bytes.getShort(rec, RECORD_HEADER_BYTES) : members);
        liveCount = 0;
        for (int j = i; j < records.size() && records.pbn(j) < end; j++) {
            if (records.offset(j) != records.offset(i)) {
                continue; // another record of the log (a repaired member's new copy, say)
            }
            int k = FrameFormat.memberIndex(rec, 0, records.pbn(j));
            if (k < 0 || records.length(j) != records.length(i) || liveCount == members) {
                return "the frame record at offset " + records.offset(i) + " does not hold PBN " + records.pbn(j);
            }
            live[liveCount] = j;
            index[liveCount++] = k;
            done[j] = true;
        }
        result = rec;
        resultLength = RECORD_HEADER_BYTES + FrameFormat.recordStored(records.length(i));
        return null;
    }

    /** True if the planned frame has dead members. */
    boolean partlyDead() {
        return liveCount < members;
    }

    /**
     * Repacks the planned frame, in {@code rec}, into a frame of its live members; null, or what
     * is wrong (the frame does not decode, a member does not match its fingerprint).
     */
    String repack(byte[] rec, LiveRecords records, CRC32C crc) {
        int bs = FrameFormat.blockSize(rec, 0);
        int stored = resultLength - RECORD_HEADER_BYTES;
        if (frame == null) {
            frame = new byte[FormatVersions.FRAME_MAX_RAW];
            packed = new byte[FormatVersions.FRAME_MAX_RAW];
            out = new byte[RECORD_HEADER_BYTES + FormatVersions.FRAME_MAX_RAW + (64 << 10)];
        }
        int payload = FrameFormat.payloadOffset(rec, 0);
        try {
            codec.decompress(rec, payload, RECORD_HEADER_BYTES + stored - payload, frame, 0, FrameFormat.rawLength(rec, 0));
        } catch (CorruptPayloadException e) {
            return "frame does not decode: " + e.getMessage();
        }
        for (int n = 0; n < liveCount; n++) {
            hasher.sha256(frame, index[n] * bs, bs, digest, 0);
            int fp = live[n] * Fingerprint.BYTES;
            if (!Arrays.equals(digest, 0, Fingerprint.BYTES, records.fps(), fp, fp + Fingerprint.BYTES)) {
                return "member " + index[n] + " of the frame does not match its fingerprint (SHA-256)";
            }
            System.arraycopy(frame, index[n] * bs, packed, n * bs, bs);
        }
        long firstLive = records.pbn(live[0]);
        int span = (int) (records.pbn(live[liveCount - 1]) - firstLive + 1);
        boolean map = span != liveCount;
        int mapLen = map ? FrameFormat.mapBytes(span) : 0;
        if (map) {
            Arrays.fill(out, RECORD_HEADER_BYTES, RECORD_HEADER_BYTES + mapLen, (byte) 0);
            Bytes.putShort(out, RECORD_HEADER_BYTES, span);
            for (int n = 0; n < liveCount; n++) {
                int bit = (int) (records.pbn(live[n]) - firstLive);
                out[RECORD_HEADER_BYTES + 2 + bit / 8] |= (byte) (1 << (bit % 8));
            }
        }
        int z = codec.compress(packed, 0, liveCount * bs, out, RECORD_HEADER_BYTES + mapLen);
        if (z < 0 || mapLen + z > FormatVersions.FRAME_MAX_STORED) {
            return null; // zstd does not pay: the frame is copied as it is
        }
        FrameFormat.writeHeader(out, 0, firstLive, liveCount, liveCount * bs, mapLen + z, map ? FrameFormat.FLAG_MEMBER_MAP : 0, crc);
        int location = FrameFormat.memberLocation(mapLen + z, liveCount);
        for (int n = 0; n < liveCount; n++) {
            records.setNewLength(live[n], location);
        }
        result = out;
        resultLength = RECORD_HEADER_BYTES + mapLen + z;
        return null;
    }

    /** The record to write for the planned frame: the old one, or the repacked one. */
    byte[] record() {
        return result;
    }

    int recordLength() {
        return resultLength;
    }

    /** The planned frame's record is written at {@code offset} of the compacted log. */
    void placed(LiveRecords records, long offset) {
        for (int n = 0; n < liveCount; n++) {
            records.setNewOffset(live[n], offset);
        }
    }

    @Override
    public void close() {
        codec.close();
    }
}
