package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DATA_READ (0x51), master to worker: read blocks {@code pbns[0..count)} (1 to
 * {@link ProtocolLimits#MAX_DATA_READ}, each at least 1). Answered by DATA_READ_ANSWER (the first
 * blocks asked for, as many as fit one frame) or DATA_FAILED with the same {@code requestId}.
 */
public record DataRead(long requestId, int count, long[] pbns) implements Message {
    public DataRead {
        if (count < 1 || count > ProtocolLimits.MAX_DATA_READ || pbns.length != count) {
            throw new IllegalArgumentException("DATA_READ carries 1.." + ProtocolLimits.MAX_DATA_READ + " PBNs, exactly its count; got count "
                    + count + " and " + pbns.length + " PBNs");
        }
        for (long p : pbns) {
            if (p < 1) {
                throw new IllegalArgumentException("DATA_READ PBN " + p + " is not a stored block");
            }
        }
    }

    @Override
    public MessageType type() {
        return MessageType.DATA_READ;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DataRead x && x.requestId == requestId && x.count == count && Arrays.equals(x.pbns, pbns);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "DataRead[requestId=" + requestId + ", count=" + count + "]";
    }
}
