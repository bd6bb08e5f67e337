package org.holdfast.server.engine;

/**
 * A {@link DedupWorker}'s answer to a {@link SegmentLookup}, per entry: {@code pbns[i]} the PBN the
 * worker resolved entry i to in its own containers (0 for a miss), and {@code runs[i]} how many
 * entries from i on the run that resolved it still covers (0 for a miss), which the master uses to
 * prefer the longest runs when two workers both resolve an entry. The worker's load rides along so
 * that the master needs no extra round trip to pick the least loaded worker.
 */
public record SegmentAnswer(int worker, int count, long[] pbns, int[] runs, DedupLoad load) {
    public SegmentAnswer {
        if (count < 0 || pbns.length < count || runs.length < count) {
            throw new IllegalArgumentException("answer of " + count + " entries does not fit its arrays");
        }
    }
}
