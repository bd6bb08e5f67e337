package org.holdfast.server.gc;

/**
 * A backup tried to reference a block that a concurrent sweep is freeing. The session must not
 * commit with it; the agent retries the backup, and the block is then stored anew.
 */
public class ReclaimedBlockException extends IllegalStateException {
    public ReclaimedBlockException(long pbn) {
        super("block " + pbn + " is being reclaimed by garbage collection; retry the backup");
    }
}
