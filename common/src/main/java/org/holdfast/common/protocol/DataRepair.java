package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DATA_REPAIR (0x5E), master to worker (cluster version 6): block {@code pbn} of the worker's range
 * is marked bad on the master, and {@code stored} (one block of {@code blockSize} bytes, codec
 * {@link PayloadCodec#RAW} or {@link PayloadCodec#ZSTD}) is an uploaded copy whose SHA-256 the
 * master checked against {@code fp}. The worker checks it again, and that the PBN holds {@code fp}
 * and is damaged, before it appends the copy as the PBN's new record (durable at the next
 * DATA_SYNC). Answered by DATA_STORED (first = {@code pbn}, count 1) or DATA_FAILED (nothing changed).
 */
public record DataRepair(long requestId, long pbn, int codec, int blockSize, byte[] fp, byte[] stored) implements Message {
    public DataRepair {
        if (pbn < 1) {
            throw new IllegalArgumentException("DATA_REPAIR PBN " + pbn + " is not a stored block");
        }
        if (codec == PayloadCodec.ZSTD_FRAME) {
            throw new IllegalArgumentException("DATA_REPAIR carries one block (raw or zstd), not a frame");
        }
        DataFrames.checkStore(codec, blockSize, 1, fp.length, stored.length);
    }

    @Override
    public MessageType type() {
        return MessageType.DATA_REPAIR;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DataRepair x && x.requestId == requestId && x.pbn == pbn && x.codec == codec && x.blockSize == blockSize
                && Arrays.equals(x.fp, fp) && Arrays.equals(x.stored, stored);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Long.hashCode(pbn);
    }

    @Override
    public String toString() {
        return "DataRepair[requestId=" + requestId + ", pbn=" + pbn + ", codec=" + PayloadCodec.name(codec) + ", blockSize=" + blockSize
                + ", stored=" + stored.length + "]";
    }
}
