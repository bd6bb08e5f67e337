package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * GC_PROTECT (0x57), master to worker (distributed GC): backup session {@code sessionId} is about
 * to rely on {@code pbns} (each at least 1, in the worker's range; 1 to
 * {@link ProtocolLimits#MAX_GC_PROTECT_PBNS} of them), which the worker owns: raise their expiry to
 * now + grace through its guard, tied to the session. With {@code zeroRefused} (the ingest's
 * duplicates) a PBN the worker's sweep has chosen is refused alone and the rest protected; without
 * (strict: blocks the session stored) any refusal protects nothing. Answered by GC_PROTECTED or
 * GC_GUARD_FAILED with the same request id.
 */
public record GcProtect(long requestId, long sessionId, boolean zeroRefused, int count, long[] pbns) implements Message {
    /** The mode byte of a strict call: any refused PBN protects nothing. */
    public static final int STRICT = 0;
    /** The mode byte of a call whose refused PBNs are refused alone (the caller stores those blocks anew). */
    public static final int ZERO_REFUSED = 1;

    public GcProtect {
        if (count < 1 || count > ProtocolLimits.MAX_GC_PROTECT_PBNS || pbns.length != count) {
            throw new IllegalArgumentException("GC_PROTECT carries 1.." + ProtocolLimits.MAX_GC_PROTECT_PBNS
                    + " PBNs, exactly its count; got count " + count);
        }
        for (int i = 0; i < count; i++) {
            String bad = pbnProblem(i, pbns[i]);
            if (bad != null) {
                throw new IllegalArgumentException("GC_PROTECT " + bad);
            }
        }
    }

    /** Why entry {@code i}, {@code pbn}, cannot be protected, or null: the zero block is nobody's to protect. */
    static String pbnProblem(int i, long pbn) {
        return pbn < 1 ? "entry " + i + " is PBN " + Long.toUnsignedString(pbn) + ", which is no block" : null;
    }

    @Override
    public MessageType type() {
        return MessageType.GC_PROTECT;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof GcProtect x && x.requestId == requestId && x.sessionId == sessionId && x.zeroRefused == zeroRefused
                && x.count == count && Arrays.equals(x.pbns, pbns);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "GcProtect[requestId=" + Long.toUnsignedString(requestId) + ", sessionId=" + sessionId + ", zeroRefused=" + zeroRefused
                + ", count=" + count + "]";
    }
}
