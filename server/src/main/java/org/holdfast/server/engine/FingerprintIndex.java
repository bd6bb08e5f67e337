package org.holdfast.server.engine;

/**
 * Answers which fingerprints are already stored, and learns those newly stored.
 *
 * <p>Two implementations plug in behind it: the exact index (every fingerprint, on disk; the
 * baseline that dedup efficiency is measured against) and the Sungem engine (Bloom filter chain,
 * sampled fingerprint index, containers of related segments); a third, the master/worker engine over
 * several Sungem engines (thesis 7.2), is a preview. Selected by {@code holdfast.dedup.engine}.
 *
 * <p>Contract, held by a shared test suite:
 * <ul>
 *   <li>A lookup gives a PBN only for an exact fingerprint match (sampling may miss a duplicate,
 *       never invent one).</li>
 *   <li>A PBN passed to {@link #forget} is never returned again for that fingerprint.</li>
 *   <li>{@link DedupStream#record} is called only after the blocks it names are durable in the data
 *       store, so a restart can never make the index point at a block that was lost.</li>
 * </ul>
 * Fingerprints travel as packed arrays of 32-byte entries, so that the hot path allocates nothing
 * per block.
 */
public interface FingerprintIndex extends AutoCloseable {

    /** Opens the per-stream state of one backup session (Sungem keeps the stream's default container and predecessor there). */
    DedupStream openStream(String volumeName);

    /** Forgets that {@code pbn} holds the fingerprint at {@code fps[off..off+32)}: the block was freed by GC. */
    void forget(long pbn, byte[] fps, int off);

    /**
     * Forgets {@code count} freed PBNs at once, their fingerprints packed in {@code fps}; an engine may
     * make them durable with one forced write instead of one per PBN. Added for the Sungem engine.
     */
    default void forgetAll(long[] pbns, byte[] fps, int count) {
        for (int i = 0; i < count; i++) {
            forget(pbns[i], fps, i * 32);
        }
    }

    /** Makes the index's own state durable (called on snapshot commit and shutdown). */
    void flush();

    /** Counters for metrics and the benchmark. */
    IndexStats stats();

    @Override
    void close();
}
