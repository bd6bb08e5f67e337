package org.holdfast.server.cluster;

/**
 * What the master heard of a worker id's range across all the nodes that held it (data on workers,
 * backend s3): the highest takeover epoch any of them archived at ({@code archiveEpoch}, 0: none
 * heard), so a node whose range data archives at a lower one is refused, and the PBN past every one
 * they were heard handing out ({@code pbnFloor}, 0: none), so a node that takes the range over never
 * hands one of them out again. Only ever raised, but for an admin's reset of the epoch; kept across
 * master restarts.
 */
public record TakeoverFence(long archiveEpoch, long pbnFloor) {
    /** Nothing heard yet. */
    public static final TakeoverFence NONE = new TakeoverFence(0, 0);

    public TakeoverFence {
        if (archiveEpoch < 0 || pbnFloor < 0) {
            throw new IllegalArgumentException("a takeover fence holds no negative number, got " + archiveEpoch + " and " + pbnFloor);
        }
    }

    /** This fence raised to at least {@code epoch} and {@code pbn} (each kept where it is higher). */
    TakeoverFence raisedTo(long epoch, long pbn) {
        return new TakeoverFence(Math.max(archiveEpoch, epoch), Math.max(pbnFloor, pbn));
    }
}
