package org.holdfast.gc.check;

import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.holdfast.common.id.VolumeId;

/** The catalog as fsck reads it; implemented by the server over its RocksDB catalog. */
public interface FsckCatalog {

    /**
     * A retained snapshot. {@code newestState}: this snapshot is its volume's current state, whose
     * mappings the GMA reference counts count. {@code held}: under a hold (its PBNs must be pinned).
     */
    record RetainedSnapshot(VolumeId volume, long sequence, long expiry, boolean held, boolean newestState) {
    }

    /** Every snapshot the catalog retains. */
    void forEachRetainedSnapshot(Consumer<RetainedSnapshot> visitor);

    /** The PBN of every mapped LBN of {@code snapshot}, once per LBN (zero blocks may be omitted). */
    void forEachPbn(RetainedSnapshot snapshot, LongConsumer sink);
}
