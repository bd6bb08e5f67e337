package org.holdfast.server.engine;

/**
 * One backup session's view of the {@link FingerprintIndex}: input segments go through
 * {@link #lookup} and, once their misses are stored, through {@link #record}. Not thread-safe: one
 * stream is driven by one session.
 */
public interface DedupStream extends AutoCloseable {

    /**
     * Looks up one input segment of {@code count} fingerprints packed in {@code fps} (32 bytes each,
     * consecutive LBNs of the stream). Writes into {@code pbns[i]} the PBN of a stored block whose
     * fingerprint equals entry i, or 0 for a miss.
     */
    void lookup(byte[] fps, int count, long[] pbns);

    /**
     * Records the outcome of a segment previously looked up: {@code pbns[i]} is now the PBN of entry
     * i, every one of them durable; {@code isNew[i]} says entry i was stored by this session rather
     * than found as a duplicate.
     */
    void record(byte[] fps, int count, long[] pbns, boolean[] isNew);

    @Override
    void close();
}
