package org.holdfast.gc.check;

/** The data store as fsck reads it; implemented by the server. */
@FunctionalInterface
public interface FsckBlockStore {
    /** State of one stored block. */
    enum BlockState { PRESENT, MISSING, CORRUPT }

    /** Whether the block is stored and its checksum verifies. */
    BlockState state(long pbn);

    /**
     * Visits every stored PBN in ascending order, so fsck can find blocks the GMA never heard of
     * (untracked: they would never be swept). The default visits nothing.
     */
    default void forEachStoredPbn(java.util.function.LongConsumer visitor) {
    }
}
