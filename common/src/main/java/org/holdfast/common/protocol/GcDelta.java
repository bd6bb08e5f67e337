package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * GC_DELTA (0x54), master to worker (distributed GC): part {@code part} of the GC metadata updates
 * of master operation {@code opId} whose PBNs lie in the worker's range, in the order the operation
 * logs them: {@code count} updates (1 to {@link ProtocolLimits#MAX_GC_DELTA_UPDATES}) of
 * {@code kinds[i]} ({@link #RC_ADD}, {@link #RAISE_EXPIRY}, {@link #PIN_ADD}) for PBN {@code pbns[i]}
 * (at least 1) with {@code values[i]}. A share over one frame travels as parts 0, 1, ... of the same
 * operation id. The worker logs each part once as its own group, numbered {@link #deltaId}, and
 * answers GC_DELTA_APPLIED once its log is synced, or GC_DELTA_FAILED.
 */
public record GcDelta(long opId, int part, int count, byte[] kinds, long[] pbns, long[] values) implements Message {
    /** RC += value (the kinds are gc-engine's GMA update kinds, {@code GmaChunk.UpdateKinds}). */
    public static final int RC_ADD = 1;
    /** ET = max(ET, value). */
    public static final int RAISE_EXPIRY = 2;
    /** pins += value. */
    public static final int PIN_ADD = 3;
    /** Bits of a delta id that number the parts of one operation. */
    public static final int PART_BITS = 20;
    /** Highest part number: 2^20 parts of 65,536 updates cover any operation. */
    public static final int MAX_PART = (1 << PART_BITS) - 1;
    /** Highest operation id a delta can carry (2^43 - 1), so that its delta id fits a signed long. */
    public static final long MAX_OP_ID = (1L << (63 - PART_BITS)) - 1;

    public GcDelta {
        String bad = problem(opId, part);
        if (bad == null && (count < 1 || count > ProtocolLimits.MAX_GC_DELTA_UPDATES || kinds.length != count || pbns.length != count
                || values.length != count)) {
            bad = "carries 1.." + ProtocolLimits.MAX_GC_DELTA_UPDATES + " updates, exactly its count; got count " + count;
        }
        for (int i = 0; bad == null && i < count; i++) {
            bad = updateProblem(i, kinds[i], pbns[i]);
        }
        if (bad != null) {
            throw new IllegalArgumentException("GC_DELTA " + bad);
        }
    }

    /** Why operation id {@code opId} and part {@code part} cannot name a delta, or null. */
    static String problem(long opId, long part) {
        if (opId < 1 || opId > MAX_OP_ID) {
            return "operation id " + Long.toUnsignedString(opId) + " is not within 1.." + MAX_OP_ID;
        }
        if (part < 0 || part > MAX_PART) {
            return "part " + part + " is not within 0.." + MAX_PART;
        }
        return null;
    }

    /** Why update {@code i} of kind {@code kind} for {@code pbn} is not a GC metadata update, or null. */
    static String updateProblem(int i, int kind, long pbn) {
        if (kind != RC_ADD && kind != RAISE_EXPIRY && kind != PIN_ADD) {
            return "update " + i + " has unknown kind " + kind + " (1 RC add, 2 raise expiry, 3 pin add)";
        }
        if (pbn < 1) {
            return "update " + i + " is for PBN " + Long.toUnsignedString(pbn) + ", which is no block";
        }
        return null;
    }

    /** The number under which a worker logs part {@code part} of operation {@code opId}: opId * 2^20 + part (increasing in both). */
    public static long deltaId(long opId, int part) {
        return (opId << PART_BITS) | part;
    }

    /** The operation id of delta id {@code deltaId}. */
    public static long opIdOf(long deltaId) {
        return deltaId >>> PART_BITS;
    }

    /** The part of delta id {@code deltaId}. */
    public static int partOf(long deltaId) {
        return (int) (deltaId & MAX_PART);
    }

    /** This delta's number in the worker's log. */
    public long deltaId() {
        return deltaId(opId, part);
    }

    @Override
    public MessageType type() {
        return MessageType.GC_DELTA;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof GcDelta x && x.opId == opId && x.part == part && x.count == count && Arrays.equals(x.kinds, kinds)
                && Arrays.equals(x.pbns, pbns) && Arrays.equals(x.values, values);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(deltaId()) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "GcDelta[opId=" + opId + ", part=" + part + ", count=" + count + "]";
    }
}
