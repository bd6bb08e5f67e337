package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DEDUP_PROBE (0x4B), master to worker: the first phase of a two-phase broadcast. Does the worker
 * have a candidate container for a lookup of {@code count} entries of one master stream, of which
 * {@code samples} are shown, each by the first 64-bit word of its fingerprint ({@code words},
 * exactly {@code samples} of them)? {@code key} names the whole lookup (a hash of its
 * fingerprints) for a later record. Answered by DEDUP_CANDIDATES or DEDUP_FAILED with the same
 * {@code requestId}.
 */
public record DedupProbe(long requestId, long stream, long key, int count, int samples, long[] words) implements Message {
    public DedupProbe {
        DedupFrames.checkCount("DEDUP_PROBE", count);
        if (samples < 0 || samples > count) {
            throw new IllegalArgumentException("DEDUP_PROBE samples " + samples + " is not within 0.." + count);
        }
        DedupFrames.checkLength("words", words.length, samples);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_PROBE;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupProbe x && x.requestId == requestId && x.stream == stream && x.key == key && x.count == count
                && x.samples == samples && Arrays.equals(x.words, words);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(words);
    }

    @Override
    public String toString() {
        return "DedupProbe[requestId=" + requestId + ", stream=" + stream + ", count=" + count + ", samples=" + samples + "]";
    }
}
