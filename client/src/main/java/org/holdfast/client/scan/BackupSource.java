package org.holdfast.client.scan;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a backup reads: the guest-visible bytes of a volume, where they have holes, and what the
 * source's own change tracking knows changed since a committed snapshot. {@link VolumeSource} is
 * a plain file or device; other sources (a qcow2 image read over NBD) keep their own tracking.
 */
public interface BackupSource extends AutoCloseable {
    /** Guest-visible size in bytes. */
    long size();

    /** Reads into {@code dst} from byte {@code position}, like {@code FileChannel.read(dst, position)}; any thread. */
    int read(ByteBuffer dst, long position) throws IOException;

    /** Where the volume has holes ({@code readHoles}: report none). The caller closes it. */
    DataRegions regions(boolean readHoles);

    /**
     * The blocks changed since committed snapshot {@code baseSequence} as the source's own tracking
     * says, or null to read every block (no tracking, or its chain is broken). {@code baseSequence}
     * 0 means the backup is full: nothing may be skipped.
     */
    default ChangedBlockList trackedChanges(long baseSequence, long volumeBytes, int blockSize) {
        return null;
    }

    /** Snapshot {@code sequence} of what was read is committed: tracking may move on. */
    default void committed(long sequence) {
    }

    /** Releases what the source holds (and finishes tracking work that must wait for it). */
    @Override
    void close();
}
