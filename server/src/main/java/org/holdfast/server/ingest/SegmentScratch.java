package org.holdfast.server.ingest;

import org.holdfast.common.id.Fingerprint;

/**
 * Per-segment scratch of one session, shared by its {@link InputSegmentLookup} and its
 * {@link SegmentRecorder} (both run on the session lane, never at once): index keys, PBNs, new-block
 * flags and storing workers of up to U_segment entries. Made once per session, reused for every segment.
 */
record SegmentScratch(byte[] keys, long[] pbns, boolean[] isNew, long[] workers) {
    /** Scratch for segments of at most {@code segmentMax} entries. */
    static SegmentScratch of(int segmentMax) {
        return new SegmentScratch(new byte[segmentMax * Fingerprint.BYTES], new long[segmentMax], new boolean[segmentMax],
                new long[segmentMax]);
    }
}
