package org.holdfast.server.gc;

import org.holdfast.gc.bookkeeping.GcOperation;
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
 * ({@link CrashRecovery}).
 *
 * <p>Lock: both halves run under the commit monitor ({@code SnapshotCommit} holds it around the
 * whole commit), which is what the operation ids and the volume's state require.
 */
public final class GcCommitHook implements CommitHook {
    private final GcRecords records;
    private final VolumeStates states;
    private final OperationLog ops;
    private final ExpiryCalculator calc = new ExpiryCalculator();

    public GcCommitHook(GcService gc) {
        this.records = gc.records();
        this.states = gc.states();
        this.ops = gc.operations();
    }

    @Override
    public AfterCommit onCommit(CommittedSnapshot c, MetadataBatch batch) {
        VolumeStates.State g = states.of(c.volume());
        SnapshotRecord s = c.snapshot();
        long expiry = calc.expiryOf(g.policy, s.createdAtMillis(), g.history);
        long opId = ops.nextId();
        ops.record(batch, new GcRecords.Op(opId, GcRecords.KIND_COMMIT, c.volume().internalId(), s.sequence(), 0));
        records.putSnapshot(batch, c.volume().internalId(), new GcRecords.SnapshotGc(s.sequence(), expiry, 0));
        return () -> logged(c, opId, expiry);
    }

    /** After the commit is durable: log the bookkeeping, then extend the expiries the next commit reads. */
    private void logged(CommittedSnapshot c, long opId, long expiry) {
        VolumeStates.State g = states.of(c.volume());
        ops.written(opId);
        ops.apply(opId, new GcOperation.Commit(c.volume().name(), c.snapshot().sequence(), c.delta().asList(), g.expiries));
        if (g.expiries.lastSequence() < c.snapshot().sequence()) {
            g.expiries.append(c.snapshot().sequence(), expiry);
            g.history.add(c.snapshot().createdAtMillis());
        }
    }
}
