package org.holdfast.server.engine;

import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.holdfast.server.store.ExactFallbackMap;

/**
 * Whether a Sungem engine may hold a freed block's fingerprint, from what it keeps in memory (and the
 * exact fallback map when that is on), loading no container: the Bloom filter chain (every
 * fingerprint recorded in its window), the SFI (samples of the stored segments it still indexes) and
 * the fallback map (the exact PBN of each fingerprint stored new). "No" is not proof: a fingerprint
 * recorded before the chain's window (or whose filter file was lost) and not an SFI sample is held
 * but answered no, so only callers for whom the engine holding the PBN would already be a broken
 * invariant use it ({@link SungemFingerprintIndex#forgetIfHeld}).
 */
final class ForgetGate {
    private static final int[] NO_CONTAINERS = new int[0];
    private final BloomFilterChain bfc;
    private final SampledFingerprintIndex sfi;
    private final ReentrantReadWriteLock sfiLock;
    private final ExactFallbackMap fallback;

    ForgetGate(BloomFilterChain bfc, SampledFingerprintIndex sfi, ReentrantReadWriteLock sfiLock, ExactFallbackMap fallback) {
        this.bfc = bfc;
        this.sfi = sfi;
        this.sfiLock = sfiLock;
        this.fallback = fallback;
    }

    /** False only if the engine cannot hold fingerprint {@code i} of {@code fps} by what it keeps; {@code pbn} is the freed block. */
    boolean mayHold(long pbn, byte[] fps, int i) {
        if (bfc.mightContain(fps, i)) {
            return true;
        }
        long w0 = FingerprintWords.word(fps, i, 0);
        if (SampledFingerprintIndex.level(w0) >= SampledFingerprintIndex.MIN_PROBE_LEVEL) {
            sfiLock.readLock().lock();
            try {
                if (sfi.probe(w0, NO_CONTAINERS, 0) >= SampledFingerprintIndex.HIT) {
                    return true;
                }
            } finally {
                sfiLock.readLock().unlock();
            }
        }
        return fallback != null && fallback.get(fps, i) == pbn;
    }
}
