package org.holdfast.gc.sweep;

/**
 * What one {@link Sweeper#sweepUnmarked} walk saw and did. The kept counts say why a used PBN stayed.
 *
 * @param chunks         GMA chunks walked (all of them: an exact walk skips none)
 * @param examined       used PBNs looked at
 * @param freed          PBNs reclaimed and marked FREED
 * @param keptMarked     in the exact mark: a retained snapshot references it
 * @param keptReferenced unmarked but RC != 0 (a bookkeeping error fsck reports; kept to be safe)
 * @param keptInFlight   protected by a backup session that was open during the walk
 * @param keptPinned     pinned by a hold
 * @param alreadyFreed   FREED markers seen
 */
public record UnmarkedSweepReport(long chunks, long examined, long freed, long keptMarked, long keptReferenced,
                                  long keptInFlight, long keptPinned, long alreadyFreed) {
}
