package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DEDUP_CANDIDATES (0x4C), worker to master: the answer to DEDUP_PROBE, how many candidate
 * containers the worker has for the probed lookup (0: none; the worker noted the lookup as
 * all-miss), plus its load ({@link DedupFrames#LOAD_FIELDS} values).
 */
public record DedupCandidates(long requestId, int candidates, long[] load) implements Message {
    public DedupCandidates {
        if (candidates < 0) {
            throw new IllegalArgumentException("DEDUP_CANDIDATES candidates must not be negative: " + candidates);
        }
        DedupFrames.checkLength("load", load.length, DedupFrames.LOAD_FIELDS);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_CANDIDATES;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupCandidates x && x.requestId == requestId && x.candidates == candidates && Arrays.equals(x.load, load);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + candidates;
    }

    @Override
    public String toString() {
        return "DedupCandidates[requestId=" + requestId + ", candidates=" + candidates + "]";
    }
}
