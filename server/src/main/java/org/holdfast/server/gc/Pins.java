package org.holdfast.server.gc;

import java.util.function.Consumer;
import java.util.function.Supplier;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.MetadataBatch;

/**
 * Sets and clears a snapshot's pinning flags ({@link GcRecords#HELD} for holds and locks,
 * {@link GcRecords#KEEP_LAST_PINNED} for keep-last) with the pin or unpin operation that counts its
 * blocks in or out, in one synced batch. Cost: one scan of the snapshot.
 *
 * <p>Lock: takes the commit monitor itself (reentrant, so callers already holding it may call);
 * under it the flag is read, the batch written and the operation logged, so ids stay in order.
 */
final class Pins {
    private final Catalog catalog;
    private final GcRecords records;
    private final OperationLog ops;
    private final Supplier<Object> commitMonitor;

    Pins(Catalog catalog, GcRecords records, OperationLog ops, Supplier<Object> commitMonitor) {
        this.catalog = catalog;
        this.records = records;
        this.ops = ops;
        this.commitMonitor = commitMonitor;
    }

    /** Sets or clears {@code flag}; {@code also} adds to the same batch. False if it was already so (nothing written). */
    boolean change(VolumeId volume, long sequence, int flag, boolean on, Consumer<MetadataBatch> also) {
        synchronized (commitMonitor.get()) {
            VolumeRecord v = catalog.requireVolume(volume);
            SnapshotRecord s = catalog.snapshot(v, sequence)
                    .orElseThrow(() -> new UnknownSnapshotException(volume.name(), sequence));
            GcRecords.SnapshotGc sg = records.snapshot(v.internalId(), sequence)
                    .orElse(new GcRecords.SnapshotGc(sequence, Long.MAX_VALUE, 0));
            boolean has = (sg.flags() & flag) != 0;
            if (has == on) {
                return false;
            }
            long opId = ops.nextId();
            int flags = on ? sg.flags() | flag : sg.flags() & ~flag;
            try (MetadataBatch batch = new MetadataBatch()) {
                ops.record(batch, new GcRecords.Op(opId, on ? GcRecords.KIND_PIN : GcRecords.KIND_UNPIN,
                        v.internalId(), sequence, 0));
                records.putSnapshot(batch, v.internalId(), new GcRecords.SnapshotGc(sequence, sg.expiry(), flags));
                also.accept(batch);
                catalog.write(batch);
            }
            ops.written(opId);
            long[] pbns = SnapshotScan.pbns(catalog, v.internalId(), sequence, s.blockCount());
            ops.apply(opId, on ? new GcOperation.Pin(pbns) : new GcOperation.Unpin(pbns));
            return true;
        }
    }

    /** Clears the keep-last pin, if there is one. */
    boolean releaseKeepLast(VolumeId volume, long sequence) {
        return change(volume, sequence, GcRecords.KEEP_LAST_PINNED, false, b -> { });
    }
}
