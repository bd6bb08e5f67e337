package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DATA_STORE (0x4D), master to worker: store {@code count} blocks of {@code blockSize} bytes as the
 * agent sent them: one payload of {@code codec} ({@link PayloadCodec#RAW} or {@link PayloadCodec#ZSTD},
 * count 1, or {@link PayloadCodec#ZSTD_FRAME}, one zstd frame of count members in order) in
 * {@code stored}, and the members' fingerprints packed 32 bytes each in {@code fps}. Answered by
 * DATA_STORED or DATA_FAILED with the same {@code requestId}.
 */
public record DataStoreRequest(long requestId, int codec, int blockSize, int count, byte[] fps, byte[] stored) implements Message {
    public DataStoreRequest {
        DataFrames.checkStore(codec, blockSize, count, fps.length, stored.length);
    }

    @Override
    public MessageType type() {
        return MessageType.DATA_STORE;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DataStoreRequest x && x.requestId == requestId && x.codec == codec && x.blockSize == blockSize
                && x.count == count && Arrays.equals(x.fps, fps) && Arrays.equals(x.stored, stored);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(fps);
    }

    @Override
    public String toString() {
        return "DataStoreRequest[requestId=" + requestId + ", codec=" + PayloadCodec.name(codec) + ", blockSize=" + blockSize
                + ", count=" + count + ", stored=" + stored.length + "]";
    }
}
