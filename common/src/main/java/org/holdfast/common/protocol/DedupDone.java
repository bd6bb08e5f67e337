package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DEDUP_DONE (0x49), worker to master: request {@code requestId} (record, forget, control) is done; the
 * worker's load rides along. On a link registered at cluster version 2 the answer to a load-only
 * control may also say that the worker started its index over ({@code startedOverAtMillis}, epoch ms,
 * and a {@code startOverReason}, one of the {@code STARTED_OVER_*} codes, each a {@link StartOverReason});
 * both 0 say nothing.
 */
public record DedupDone(long requestId, long[] load, long startedOverAtMillis, int startOverReason) implements Message {
    /** A registration as a new worker (epoch 1) found an index of an earlier membership. */
    public static final int STARTED_OVER_NEW_MEMBERSHIP = 1;
    /** The index was built for another worker id. */
    public static final int STARTED_OVER_OTHER_ID = 2;
    /** The index missed registrations of its worker id (its owner file names another epoch than the one before). */
    public static final int STARTED_OVER_EPOCH_GAP = 3;
    /** The index's owner file is not an id and an epoch (torn, foreign). */
    public static final int STARTED_OVER_UNREADABLE_OWNER = 4;

    public DedupDone {
        DedupFrames.checkLength("load", load.length, DedupFrames.LOAD_FIELDS);
        if ((startedOverAtMillis == 0) != (startOverReason == 0) || startedOverAtMillis < 0
                || (startOverReason != 0 && !StartOverReason.isCode(startOverReason))) {
            throw new IllegalArgumentException("a start-over needs a time above 0 and a reason 1.." + STARTED_OVER_UNREADABLE_OWNER
                    + " (or both 0), got " + startedOverAtMillis + " and " + startOverReason);
        }
    }

    /** An answer that says nothing about a start-over (what cluster version 1 carries). */
    public DedupDone(long requestId, long[] load) {
        this(requestId, load, 0, 0);
    }

    /** True if this answer reports a start-over. */
    public boolean startedOver() {
        return startOverReason != 0;
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_DONE;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupDone x && x.requestId == requestId && Arrays.equals(x.load, load)
                && x.startedOverAtMillis == startedOverAtMillis && x.startOverReason == startOverReason;
    }

    @Override
    public int hashCode() {
        return (Long.hashCode(requestId) * 31 + Arrays.hashCode(load)) * 31 + startOverReason;
    }

    @Override
    public String toString() {
        return "DedupDone[requestId=" + requestId + ", load=" + Arrays.toString(load)
                + (startedOver() ? ", startedOverAt=" + startedOverAtMillis + ", reason=" + startOverReason : "") + "]";
    }
}
