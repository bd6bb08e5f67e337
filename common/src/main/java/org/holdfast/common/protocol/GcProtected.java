package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * GC_PROTECTED (0x58), worker to master: GC_PROTECT {@code requestId} is done. {@code refused}
 * names, in increasing order, the entries of the request (indexes into its PBNs) that the worker's
 * sweep had chosen and that are not protected; every other entry is protected, and its raised
 * expiry is durable in the worker's log. In strict mode a refusal means nothing of the request was
 * protected.
 */
public record GcProtected(long requestId, int[] refused) implements Message {
    public GcProtected {
        String bad = problem(refused);
        if (bad != null) {
            throw new IllegalArgumentException("GC_PROTECTED " + bad);
        }
    }

    /** Why {@code refused} cannot name refused entries, or null: at most the limit, each below it, increasing. */
    static String problem(int[] refused) {
        if (refused.length > ProtocolLimits.MAX_GC_PROTECT_PBNS) {
            return "names " + refused.length + " refused entries, over " + ProtocolLimits.MAX_GC_PROTECT_PBNS;
        }
        for (int i = 0; i < refused.length; i++) {
            if (refused[i] < 0 || refused[i] >= ProtocolLimits.MAX_GC_PROTECT_PBNS || (i > 0 && refused[i] <= refused[i - 1])) {
                return "refused entry " + Integer.toUnsignedString(refused[i]) + " is not below "
                        + ProtocolLimits.MAX_GC_PROTECT_PBNS + " and above the one before it";
            }
        }
        return null;
    }

    @Override
    public MessageType type() {
        return MessageType.GC_PROTECTED;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof GcProtected x && x.requestId == requestId && Arrays.equals(x.refused, refused);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(refused);
    }

    @Override
    public String toString() {
        return "GcProtected[requestId=" + Long.toUnsignedString(requestId) + ", refused=" + refused.length + "]";
    }
}
