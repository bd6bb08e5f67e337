package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * COUNTS_CHECKED (0x61), worker to master (cluster version 7): what the worker found comparing its GC
 * counts with the COUNTS_CHECK {@code requestId}, or why it did not compare ({@link #REFUSED}, with
 * {@code message}). Counts: PBNs compared, RC below the catalog's (the dangerous side: a sweep could
 * free a referenced block), RC above it (the leak side), pins that differ, PBNs the catalog references
 * that the worker's range store does not hold; up to {@link #MAX_SAMPLES} of them by PBN and kind.
 */
public record CountsChecked(long requestId, int status, long compared, long rcBelow, long rcAbove, long pinsDiffer, long notHeld,
                            long[] samplePbns, int[] sampleKinds, String message) implements Message {
    public static final int COMPARED = 0;
    public static final int REFUSED = 1;
    public static final int KIND_RC_BELOW = 1;
    public static final int KIND_RC_ABOVE = 2;
    public static final int KIND_PINS = 3;
    public static final int KIND_NOT_HELD = 4;
    /** Most sample PBNs one answer names. */
    public static final int MAX_SAMPLES = 16;

    public CountsChecked {
        String bad = problem(status, new long[] {compared, rcBelow, rcAbove, pinsDiffer, notHeld}, samplePbns, sampleKinds);
        if (bad != null) {
            throw new IllegalArgumentException("COUNTS_CHECKED " + bad);
        }
    }

    /** A refusal: nothing compared. */
    public static CountsChecked refused(long requestId, String message) {
        return new CountsChecked(requestId, REFUSED, 0, 0, 0, 0, 0, new long[0], new int[0], WireStrings.truncate(message,
                ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    static String problem(int status, long[] counts, long[] samplePbns, int[] sampleKinds) {
        if (status != COMPARED && status != REFUSED) {
            return "status " + status + " is unknown (0 compared, 1 refused)";
        }
        for (long c : counts) {
            if (c < 0) {
                return "has a count above 2^63";
            }
        }
        if (samplePbns.length > MAX_SAMPLES || sampleKinds.length != samplePbns.length) {
            return "names " + samplePbns.length + " samples (at most " + MAX_SAMPLES + ")";
        }
        for (int k : sampleKinds) {
            if (k < KIND_RC_BELOW || k > KIND_NOT_HELD) {
                return "sample kind " + k + " is unknown (1 RC below, 2 RC above, 3 pins, 4 not held)";
            }
        }
        return null;
    }

    @Override
    public MessageType type() {
        return MessageType.COUNTS_CHECKED;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CountsChecked c && c.requestId == requestId && c.status == status && c.compared == compared
                && c.rcBelow == rcBelow && c.rcAbove == rcAbove && c.pinsDiffer == pinsDiffer && c.notHeld == notHeld
                && Arrays.equals(c.samplePbns, samplePbns) && Arrays.equals(c.sampleKinds, sampleKinds) && c.message.equals(message);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Long.hashCode(compared);
    }

    @Override
    public String toString() {
        return "CountsChecked[requestId=" + requestId + ", status=" + status + ", compared=" + compared + ", rcBelow=" + rcBelow
                + ", rcAbove=" + rcAbove + ", pinsDiffer=" + pinsDiffer + ", notHeld=" + notHeld + ", message=" + message + "]";
    }
}
