package org.holdfast.gc.sweep;

/**
 * What one sweep saw and did. "Kept" counts say why a USED, not yet freed PBN stayed.
 *
 * @param now            the time the sweep compared expiries against (epoch ms)
 * @param chunksScanned  GMA chunks read by this sweep (chunks untouched since a visit whose earliest pending expiry lies ahead are skipped)
 * @param freed          PBNs handed to the reclaimer and marked FREED (0 in a dry run)
 * @param reclaimable    PBNs that met every condition (equals freed unless dry run)
 * @param keptReferenced RC > 0
 * @param keptUnexpired  RC = 0 but ET not yet passed (includes grace protection)
 * @param keptPinned     RC = 0, expired, but pinned by a hold
 * @param alreadyFreed   FREED markers seen
 */
public record SweepReport(long now, long chunksScanned, long freed, long reclaimable, long keptReferenced,
        long keptUnexpired, long keptPinned, long alreadyFreed) {
}
