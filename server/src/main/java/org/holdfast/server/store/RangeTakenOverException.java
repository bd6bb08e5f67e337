package org.holdfast.server.store;

/**
 * A takeover of a worker's range found its epoch's marker already written: another node took the
 * range over at that epoch (or is doing so now), so this one must not write anything.
 */
public final class RangeTakenOverException extends StoreException {
    public RangeTakenOverException(long worker, long epoch, String key) {
        super("range-takeover", key, null, "another node " + (epoch == 1 ? "started archiving worker " + worker + "'s range" : "took worker "
                + worker + "'s range over") + " at epoch " + epoch + " (its adopted"
                + " marker " + key + " exists): this node refuses to serve the range and wrote nothing. Stop one of the nodes"
                + " started as this worker; if the other one is gone, start this one again on an empty range-data directory and"
                + " it takes over at the next epoch", null);
    }
}
