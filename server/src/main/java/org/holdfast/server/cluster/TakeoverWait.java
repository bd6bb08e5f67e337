package org.holdfast.server.cluster;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Holds back a node that would take a worker id's archived range over from the bucket until the
 * master has not heard the id's old node for {@code lost-after}, counted on a monotonic clock and
 * from the master's own start too: the old node's delete lease (docs/architecture.md, "Delete
 * lease") runs out only then, so until then it may still delete an object the takeover adopts.
 * From the start, the wait is the longer of {@code lost-after} and the longest one an earlier run told
 * its workers: a node cut off before this start holds a lease of the value it was told.
 */
final class TakeoverWait {
    private final Duration lostAfter;
    private final Duration afterStart;
    private final LongSupplier nanoTime;
    private final long startedNanos;

    /** {@code toldBefore}: the longest {@code lost-after} an earlier run of this master may have told (null: none). */
    TakeoverWait(Duration lostAfter, Duration toldBefore, LongSupplier nanoTime) {
        this.lostAfter = lostAfter;
        this.afterStart = toldBefore != null && toldBefore.compareTo(lostAfter) > 0 ? toldBefore : lostAfter;
        this.nanoTime = nanoTime;
        this.startedNanos = nanoTime.getAsLong();
    }

    /** Whether the wait from the master's start is over: no node can hold a lease an earlier run told it. */
    boolean startOutwaited() {
        return nanoTime.getAsLong() - startedNanos >= afterStart.toNanos();
    }

    /** Now on the monotonic clock, for {@code lastHeardNanos} (never 0, which means not heard). */
    long now() {
        long now = nanoTime.getAsLong();
        return now == 0 ? 1 : now;
    }

    /**
     * Refuses ({@code TAKEOVER_WAIT}, retryable) a registration of worker {@code workerId} that takes
     * its range over (the node's range data is empty, {@code archiveEpoch} 0, while the master heard the
     * range archive at {@code fenceEpoch} ≥ 1) while the old node was heard, at {@code lastHeardNanos}
     * (0: never since this master started), or the master started, less than {@code lost-after} ago.
     */
    void refuseEarly(long workerId, long archiveEpoch, long fenceEpoch, long lastHeardNanos) {
        if (archiveEpoch != 0 || fenceEpoch < 1) {
            return; // the node's own range data (a flap, a restart), or nothing archived: no takeover
        }
        long now = nanoTime.getAsLong();
        long since = lastHeardNanos == 0 ? startedNanos : lastHeardNanos; // heard after the start
        long silent = now - since;
        // a node heard since this start was told this run's lost-after at its REGISTER
        Duration wait = lastHeardNanos == 0 ? afterStart : lostAfter;
        if (silent >= wait.toNanos()) {
            return;
        }
        String heard = lastHeardNanos == 0 ? "this master started " + seconds(now - startedNanos) + " ago and has not heard it"
                : "was heard " + seconds(now - lastHeardNanos) + " ago";
        throw new RegistrationRefusedException(RegistrationRefusedException.Reason.TAKEOVER_WAIT, "worker " + workerId + " "
                + (lastHeardNanos == 0 ? "archives its range to the bucket (epoch " + fenceEpoch + "); " + heard
                : "(range archived at epoch " + fenceEpoch + ") " + heard)
                + "; a takeover may start once it has been silent for " + (wait == lostAfter
                ? "holdfast.cluster.lost-after (" + seconds(lostAfter.toNanos()) + ")"
                : seconds(wait.toNanos()) + ", the holdfast.cluster.lost-after an earlier run of this master told its workers")
                + ", as its old node may still delete objects until then; retrying (in about " + seconds(wait.toNanos() - silent)
                + ")");
    }

    private static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1fs", nanos / 1e9);
    }
}
