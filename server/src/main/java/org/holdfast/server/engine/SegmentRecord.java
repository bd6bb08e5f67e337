package org.holdfast.server.engine;

/**
 * The master's record request to a {@link DedupWorker} (thesis 7.2.2 and 7.2.3), sent after the
 * blocks are durable: the same entries as the lookup, with {@code pbns[i]} the final PBN of each
 * entry this worker now holds (a duplicate it resolved, or a miss routed to it) and 0 for entries
 * other workers hold. {@code isNew[i]} says entry i was stored by the session. {@code placed} is
 * how many of the entries are misses routed here to be stored (for the worker's load). The arrays
 * belong to the caller until the request completes.
 */
public record SegmentRecord(long stream, byte[] fps, int count, long[] pbns, boolean[] isNew, int placed) {
    public SegmentRecord {
        if (count < 0 || fps.length < count * 32L || pbns.length < count || isNew.length < count) {
            throw new IllegalArgumentException("record of " + count + " entries does not fit its arrays");
        }
    }
}
