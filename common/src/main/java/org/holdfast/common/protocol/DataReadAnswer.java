package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DATA_READ_ANSWER (0x52), worker to master: the first {@code count} blocks a DATA_READ asked for,
 * in its order, each as the worker's store reads it: its PBN, fingerprint, codec ({@link PayloadCodec#RAW}
 * or {@link PayloadCodec#ZSTD}; a member of a stored frame comes decoded, raw), raw length (the
 * block size) and stored bytes, packed one after the other in {@code data} ({@code storedLengths}
 * say where each ends). Enough for the master to decode each block and check it against its
 * fingerprint; the whole body fits one frame ({@link #fits}).
 */
public record DataReadAnswer(long requestId, int count, long[] pbns, byte[] fps, byte[] codecs, int[] rawLengths, int[] storedLengths,
                             byte[] data) implements Message {
    /** Bytes in front of each block's stored bytes: u64 pbn, 32 fingerprint, u8 codec, u32 raw length, u32 stored length. */
    public static final int BLOCK_HEADER_BYTES = 8 + 32 + 1 + 4 + 4;
    /** Bytes before the first block: u64 requestId, u32 count. */
    public static final int FIXED_BYTES = 8 + 4;

    public DataReadAnswer {
        if (count < 1 || count > ProtocolLimits.MAX_DATA_READ) {
            throw new IllegalArgumentException("DATA_READ_ANSWER carries 1.." + ProtocolLimits.MAX_DATA_READ + " blocks, not " + count);
        }
        DedupFrames.checkLength("pbns", pbns.length, count);
        DedupFrames.checkLength("fps", fps.length, count * 32L);
        DedupFrames.checkLength("codecs", codecs.length, count);
        DedupFrames.checkLength("rawLengths", rawLengths.length, count);
        DedupFrames.checkLength("storedLengths", storedLengths.length, count);
        long total = 0;
        for (int i = 0; i < count; i++) {
            if (pbns[i] < 1) {
                throw new IllegalArgumentException("DATA_READ_ANSWER PBN " + pbns[i] + " of block " + i + " is not a stored block");
            }
            String bad = DataFrames.storedProblem(codecs[i], rawLengths[i], storedLengths[i]);
            if (bad != null) {
                throw new IllegalArgumentException("DATA_READ_ANSWER block " + i + ": " + bad);
            }
            total += storedLengths[i];
        }
        DedupFrames.checkLength("data", data.length, total);
        if (!fits(count, total)) {
            throw new IllegalArgumentException("DATA_READ_ANSWER of " + count + " blocks and " + total + " stored bytes is over "
                    + ProtocolLimits.MAX_BODY + " bytes");
        }
    }

    /** True if an answer of {@code count} blocks holding {@code storedBytes} in all fits one frame. */
    public static boolean fits(int count, long storedBytes) {
        return FIXED_BYTES + (long) count * BLOCK_HEADER_BYTES + storedBytes <= ProtocolLimits.MAX_BODY;
    }

    /** Where block {@code i}'s stored bytes start in {@link #data()}. */
    public int offset(int i) {
        int off = 0;
        for (int k = 0; k < i; k++) {
            off += storedLengths[k];
        }
        return off;
    }

    @Override
    public MessageType type() {
        return MessageType.DATA_READ_ANSWER;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DataReadAnswer x && x.requestId == requestId && x.count == count && Arrays.equals(x.pbns, pbns)
                && Arrays.equals(x.fps, fps) && Arrays.equals(x.codecs, codecs) && Arrays.equals(x.rawLengths, rawLengths)
                && Arrays.equals(x.storedLengths, storedLengths) && Arrays.equals(x.data, data);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "DataReadAnswer[requestId=" + requestId + ", count=" + count + ", bytes=" + data.length + "]";
    }
}
