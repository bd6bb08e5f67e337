package org.holdfast.server.cluster;

import java.time.Duration;

/**
 * A takeover of one worker id's archived range that a node began at REGISTER (empty range data, let
 * through by the {@link TakeoverWait}) and has not ended: it reads the dead node's logs through
 * SHA-256 before it claims the next epoch, which can take hours. Until it ends, the id's old node
 * (its own range data, at an epoch the master heard) is refused: registered during the read it would
 * serve on its open store, and whatever it uploads after the claim is deleted as a late upload.
 * It ends when the taker claims (a serving report, or a REGISTER above the epochs heard), reports its
 * store refused, or has not been heard for {@code lost-after} (died mid-read: nothing was handed
 * over, so the old node may come back). Not thread-safe: {@link TakeoverGuard} holds it under the
 * registry's lock.
 */
final class TakeoverInProgress {
    /** The highest archive epoch heard for the id when the takeover began; the taker claims above it. */
    private final long base;

    private TakeoverInProgress(long base) {
        this.base = base;
    }

    /** A takeover beginning now, over a range the master heard archived at up to {@code base}. */
    static TakeoverInProgress began(long base) {
        return new TakeoverInProgress(base);
    }

    /** Whether a REGISTER saying {@code archiveEpoch} is the taker back after its claim (above every epoch heard at the start). */
    boolean claimedBy(long archiveEpoch) {
        return archiveEpoch > base;
    }

    /**
     * Refuses ({@code TAKEOVER_IN_PROGRESS}, retryable) a node of worker {@code workerId} whose range data
     * archives at {@code archiveEpoch} (1 up to the base: the old node) while the taker was heard, at
     * {@code lastHeardNanos}, less than {@code lostAfter} before {@code nowNanos}. Changes nothing.
     */
    void refuseOldNode(long workerId, long archiveEpoch, long lastHeardNanos, long nowNanos, Duration lostAfter) {
        if (archiveEpoch < 1 || claimedBy(archiveEpoch)) {
            return;
        }
        long silent = nowNanos - lastHeardNanos;
        if (silent >= lostAfter.toNanos()) {
            return; // the taker died mid-read (or is cut off, and its own claim check aborts): nothing was handed over
        }
        throw new RegistrationRefusedException(RegistrationRefusedException.Reason.TAKEOVER_IN_PROGRESS, "worker " + workerId
                + " is being taken over by another node (it registered with empty range-data and reads the range's logs in the"
                + " bucket before it claims epoch " + (base + 1) + "; heard " + seconds(silent) + " ago); this node's range-data"
                + " archives at epoch " + archiveEpoch + " and would serve until that claim, and what it uploaded after it would be"
                + " deleted as a late upload. Retrying: it registers again once the takeover is refused, or the taker has been"
                + " silent for holdfast.cluster.lost-after (" + seconds(lostAfter.toNanos()) + ", in about "
                + seconds(lostAfter.toNanos() - silent) + "); if the takeover succeeds, this node is refused as taken over: move its"
                + " <data-dir>/range-data away (docs/operations.md \"Replace a dead worker whose range is in the bucket\")");
    }

    private static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1fs", nanos / 1e9);
    }
}
