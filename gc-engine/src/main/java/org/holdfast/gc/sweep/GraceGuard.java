package org.holdfast.gc.sweep;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.gc.gma.GmaFormat;

/**
 * Protects blocks that a backup in progress has written or matched as duplicates, before its
 * snapshot commits (design.md: "a PBN written, or matched as a duplicate, by a snapshot not yet
 * committed carries a grace expiry").
 *
 * <p>{@link #protect} logs ET = max(ET, now + grace) through BOSC, so the protection is durable and
 * survives a restart (a resumed backup is still covered). It is decided under a per-chunk lock
 * that the sweep also holds while it re-checks a chunk and chooses victims; a PBN the sweep has
 * chosen is tombstoned first, and {@link #protect} then answers false: the caller must treat the
 * block as a miss and store the data again. So a block is either protected before the sweep looks
 * (the sweep sees the raised ET after its barrier) or refused after.
 *
 * <p>Obligations of the caller: protect every PBN a session writes or matches, before using it in
 * a snapshot; a session lasting longer than the grace period re-protects its PBNs (or the grace
 * is set longer than the longest backup); after a restart, re-protect the PBNs of a resumed
 * session before the first sweep. Tombstones live for {@code tombstoneLinger} after the reclaimer
 * made the engine forget the fingerprint, which covers a lookup already in flight.
 */
public final class GraceGuard {
    private static final int STRIPES = 1024;

    private final BoscPipeline pipeline;
    private final Clock clock;
    private final Duration grace;
    private final Duration tombstoneLinger;
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];
    private final ConcurrentHashMap<Long, Long> tombstones = new ConcurrentHashMap<>();

    public GraceGuard(BoscPipeline pipeline, Clock clock, Duration grace, Duration tombstoneLinger) {
        if (grace.isNegative() || grace.isZero()) {
            throw new IllegalArgumentException("grace period must be positive: " + grace);
        }
        this.pipeline = pipeline;
        this.clock = clock;
        this.grace = grace;
        this.tombstoneLinger = tombstoneLinger;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    public Duration grace() {
        return grace;
    }

    ReentrantLock stripe(long chunk) {
        return stripes[(int) Math.floorMod(chunk, (long) STRIPES)];
    }

    /**
     * Protects {@code pbn} for the grace period. Returns false if the sweep is freeing or has just
     * freed it: do not reference it. PBN 0 is always fine.
     */
    public boolean protect(long pbn) {
        if (pbn == 0) {
            return true;
        }
        ReentrantLock l = stripe(GmaFormat.chunkOf(pbn));
        l.lock();
        try {
            if (tombstones.containsKey(pbn)) {
                return false;
            }
            pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, pbn, clock.millis() + grace.toMillis());
            return true;
        } finally {
            l.unlock();
        }
    }

    /** Called by the sweep with the chunk's stripe held. */
    void tombstone(long pbn) {
        tombstones.put(pbn, Long.MAX_VALUE);
    }

    /** The reclaimer is done with {@code pbn}: start its linger time. */
    void reclaimed(long pbn, long now) {
        tombstones.replace(pbn, now);
    }

    /** Drops tombstones older than the linger time. */
    void prune(long now) {
        long limit = now - tombstoneLinger.toMillis();
        tombstones.values().removeIf(t -> t < limit);
    }

    /** Tombstones currently held (tests and metrics). */
    public int tombstones() {
        return tombstones.size();
    }
}
