package org.holdfast.gc.sweep;

/**
 * Frees blocks the sweep found unreferenced; implemented by the server. For each PBN it must make
 * the engine forget the fingerprint (mark its container stale) durably before returning, then
 * release the block's space (at once or by later compaction). It must be idempotent and accept
 * PBNs it does not know: after a crash the sweep may hand over a PBN again.
 */
@FunctionalInterface
public interface BlockReclaimer {
    void reclaim(long[] pbns, int count);
}
