package org.holdfast.server.engine;

/**
 * A {@link DedupWorker}'s answer to a {@link SegmentProbe}: how many candidate containers it has for
 * the lookup (0: none, and it has noted the lookup as all-miss), with its load, so that the master
 * can pick the least loaded worker without asking for a full lookup.
 */
public record ProbeAnswer(int worker, int candidates, DedupLoad load) {
    public ProbeAnswer {
        if (candidates < 0) {
            throw new IllegalArgumentException("candidates must not be negative: " + candidates);
        }
    }
}
