package org.holdfast.gc.check;

/** The data store as fsck reads it; implemented by the server. */
public interface FsckBlockStore {
    /** State of one stored block. */
    enum BlockState { PRESENT, MISSING, CORRUPT }

    /** Whether the block is stored and its checksum verifies. */
    BlockState state(long pbn);
}
