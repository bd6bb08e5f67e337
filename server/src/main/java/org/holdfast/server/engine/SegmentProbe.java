package org.holdfast.server.engine;

/**
 * The first phase of a two-phase broadcast ({@link ClusterBroadcast#TWO_PHASE}): the master asks a
 * {@link DedupWorker} whether it has any candidate container for a lookup of {@code count} entries
 * of stream {@code stream}, showing it only the first 64-bit word ({@code words}) of
 * {@code sampleCount} of them: the entries the SFI samples (level at least
 * {@link SampledFingerprintIndex#MIN_PROBE_LEVEL}, about a quarter), topped up with the first others
 * when a short lookup has fewer than {@link #MIN_SAMPLES}. The SFI is keyed by that word, and a
 * candidate is only a hint (the lookup that follows matches all 32 bytes), so a quarter of the
 * bytes is enough. {@code key} is
 * {@code SungemDedupStream.keyOf} of the whole lookup, so that a worker without candidates can note
 * the lookup as all-miss and a later record of it needs no second lookup. The arrays belong to the
 * caller; a worker reads them before its answer completes.
 */
public record SegmentProbe(long stream, long key, int count, long[] words, int sampleCount) {
    /** A lookup shows at least this many entries (or all it has). */
    public static final int MIN_SAMPLES = 4;

    public SegmentProbe {
        if (count < 0 || sampleCount < 0 || sampleCount > count || words.length < sampleCount) {
            throw new IllegalArgumentException("probe of " + sampleCount + " samples of " + count + " entries does not fit "
                    + words.length + " words");
        }
    }
}
