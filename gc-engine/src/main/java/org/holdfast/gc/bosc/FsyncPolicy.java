package org.holdfast.gc.bosc;

/** When the update log is forced to disk. */
public enum FsyncPolicy {
    /** After every group-commit batch: a logged update survives power loss once the batch is written. */
    EVERY_BATCH,
    /**
     * At most every {@link BoscSettings#fsyncInterval()}: survives a process crash at once, power loss
     * after the interval. Safe for GC either way, because a committer forces the log before writing
     * any chunk that holds its records, and the server re-drives operations not yet in the log.
     */
    INTERVAL
}
