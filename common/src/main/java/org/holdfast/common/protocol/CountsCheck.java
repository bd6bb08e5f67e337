package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * COUNTS_CHECK (0x60), master to worker (cluster version 7): the master's catalog counts of the PBNs
 * [{@code first}, {@code limit}) of the worker's range, for the online check of its GC counts. Every
 * PBN of the span that the catalog references is a record (ascending {@code pbns}, with its RC, pins
 * and expiry, epoch ms); a PBN of the span without a record has RC and pins 0 by the catalog. The
 * worker compares RC and pins, and checks that it holds every record's block that is still needed
 * at the master's time {@code now} (RC or pins above 0, or an expiry after now); it changes nothing
 * and answers COUNTS_CHECKED.
 */
public record CountsCheck(long requestId, long first, long limit, long now, long[] pbns, int[] rc, int[] pins, long[] et)
        implements Message {
    /** Most records one frame carries (24 bytes each: 96 KiB). */
    public static final int MAX_RECORDS = 4096;
    /** Widest span one frame covers (128 GMA chunks of 8191 PBNs), so a worker's answer to one frame is bounded in time. */
    public static final long MAX_SPAN = 128L * 8191;

    public CountsCheck {
        String bad = problem(first, limit, now, pbns, rc, pins, et);
        if (bad != null) {
            throw new IllegalArgumentException("COUNTS_CHECK " + bad);
        }
    }

    /** Why these values cannot be a check, or null. */
    static String problem(long first, long limit, long now, long[] pbns, int[] rc, int[] pins, long[] et) {
        if (first <= 0 || limit <= first || limit - first > MAX_SPAN) {
            return "span [" + first + ", " + limit + ") is empty, starts at or below PBN 0, or is wider than " + MAX_SPAN + " PBNs";
        }
        if (now < 0) {
            return "time " + Long.toUnsignedString(now) + " is not an epoch millisecond";
        }
        if (pbns.length > MAX_RECORDS || rc.length != pbns.length || pins.length != pbns.length || et.length != pbns.length) {
            return "has " + pbns.length + " records (at most " + MAX_RECORDS + ", with as many counts and pins)";
        }
        long last = first - 1;
        for (int i = 0; i < pbns.length; i++) {
            if (pbns[i] <= last || pbns[i] >= limit) {
                return "record " + i + " (PBN " + pbns[i] + ") is not ascending inside the span [" + first + ", " + limit + ")";
            }
            if (rc[i] < 0 || pins[i] < 0 || et[i] < 0) {
                return "record " + i + " (PBN " + pbns[i] + ") has a count, pins or expiry of 2^31 (2^63) or more";
            }
            last = pbns[i];
        }
        return null;
    }

    /** True if record {@code i}'s block must still be held at {@code now}: referenced, pinned, or not yet expired. */
    public boolean needed(int i) {
        return rc[i] > 0 || pins[i] > 0 || et[i] > now;
    }

    @Override
    public MessageType type() {
        return MessageType.COUNTS_CHECK;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CountsCheck c && c.requestId == requestId && c.first == first && c.limit == limit && c.now == now
                && Arrays.equals(c.pbns, pbns) && Arrays.equals(c.rc, rc) && Arrays.equals(c.pins, pins) && Arrays.equals(c.et, et);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "CountsCheck[requestId=" + requestId + ", first=" + first + ", limit=" + limit + ", records=" + pbns.length + "]";
    }
}
