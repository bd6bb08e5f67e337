package org.holdfast.server.engine;

/**
 * Cuts the runs of consecutive LBNs that the ingest hands a {@link DedupStream} into input segments
 * of at most U_segment fingerprints (thesis 5.4: an input segment longer than U_segment is chopped,
 * which bounds the length of every stored segment formed from it).
 */
public final class InputSegmenter {
    private final int maxLength;

    /** Cuts at {@code uSegment}. */
    public InputSegmenter(int uSegment) {
        if (uSegment < 1) {
            throw new IllegalArgumentException("U_segment must be positive: " + uSegment);
        }
        this.maxLength = uSegment;
    }

    /** End (exclusive) of the input segment that starts at {@code start} in a run of {@code count}. */
    public int end(int start, int count) {
        return Math.min(count, start + maxLength);
    }

    /** Number of input segments a run of {@code count} fingerprints forms. */
    public int segments(int count) {
        return (count + maxLength - 1) / maxLength;
    }
}
