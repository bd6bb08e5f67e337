package org.holdfast.server.gc;

import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.retention.ExpiryCalculator;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.store.MetadataBatch;

/**
 * Drives GC bookkeeping from each snapshot commit. Inside the commit, the snapshot's expiry is
 * fixed and the commit operation recorded in the commit's own batch; once the batch is durable, the
 * {@link AfterCommit} returned (which carries the operation id and expiry) logs the GMA updates and
 * extends the volume's in-memory expiries. A crash between the two is re-driven at open
 * ({@link CrashRecovery}). A commit of more than {@code partEntries} delta entries is logged as
 * several operations ({@link CommitParts}), so the heap never holds its whole bookkeeping.
 *
 * <p>Lock: both halves run under the commit monitor ({@code SnapshotCommit} holds it around the
 * whole commit), which is what the operation ids and the volume's state require.
 */
public final class GcCommitHook implements CommitHook {
    private final GcRecords records;
    private final VolumeStates states;
    private final OperationLog ops;
    private final int partEntries;
    private final ExpiryCalculator calc = new ExpiryCalculator();

    public GcCommitHook(GcService gc) {
        this(gc, CommitParts.DEFAULT_PART_ENTRIES);
    }

    /** A hook that logs a commit of more than {@code partEntries} delta entries in parts (see {@link CommitParts}). */
    public GcCommitHook(GcService gc, int partEntries) {
        if (partEntries < 1) {
            throw new IllegalArgumentException("entries per part must be at least 1, got " + partEntries);
        }
        this.records = gc.records();
        this.states = gc.states();
        this.ops = gc.operations();
        this.partEntries = partEntries;
    }

    @Override
    public AfterCommit onCommit(CommittedSnapshot c, MetadataBatch batch) {
        VolumeStates.State g = states.of(c.volume());
        SnapshotRecord s = c.snapshot();
        long expiry = calc.expiryOf(g.policy, s.createdAtMillis(), g.history);
        long opId = ops.nextId();
        int parts = CommitParts.partsFor(c.delta().size(), partEntries);
        long field = parts == 1 ? 0 : GcRecords.commitParts(partEntries, parts);
        GcRecords.Op op = new GcRecords.Op(opId, GcRecords.KIND_COMMIT, c.volume().internalId(), s.sequence(), field);
        ops.record(batch, op);
        records.putSnapshot(batch, c.volume().internalId(), new GcRecords.SnapshotGc(s.sequence(), expiry, 0));
        return () -> logged(c, op, expiry);
    }

    /** After the commit is durable: log the bookkeeping (in parts, read back from the delta), then extend the expiries the next commit reads. */
    private void logged(CommittedSnapshot c, GcRecords.Op op, long expiry) {
        VolumeStates.State g = states.of(c.volume());
        ops.written(op.lastId());
        boolean[] stopped = {false};
        CommitParts.log(c.volume().name(), c.snapshot().sequence(), g.expiries, op.id(), op.parts(), partEntries, op.id() - 1,
                CommitParts.of(c.delta()), (id, part) -> {
                    if (stopped[0]) {
                        return;
                    }
                    ops.apply(id, part);
                    // once logging failed, the re-drive that resumes it logs the rest from the catalog
                    stopped[0] = ops.failure() != null;
                    if (id < op.lastId()) {
                        KillPoints.hit(KillPoints.COMMIT_AFTER_GC_PART);
                    }
                });
        if (g.expiries.lastSequence() < c.snapshot().sequence()) {
            g.expiries.append(c.snapshot().sequence(), expiry);
            g.history.add(c.snapshot().createdAtMillis());
        }
    }
}
