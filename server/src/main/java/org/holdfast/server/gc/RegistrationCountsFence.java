package org.holdfast.server.gc;

import org.holdfast.common.protocol.Register;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * Applies {@link CountsMarkDecision} to a worker registering with a master of {@code data=workers}:
 * clears or puts its counts fence ({@link WorkerCountsFences}, synced) before the registration is
 * answered, so no sweep of the new link runs on counts the decision refused. Called on the cluster
 * port's lane, one registration at a time.
 */
public final class RegistrationCountsFence {
    private final MetadataDb db;
    private final WorkerCountsFences fences;

    public RegistrationCountsFence(MetadataDb db) {
        this.db = db;
        this.fences = new WorkerCountsFences(db);
    }

    /** Decides for worker {@code w} ({@code firstTime}: its record was created by this registration), applies it, returns it. */
    public CountsMarkDecision.Verdict registered(WorkerRecord w, boolean firstTime, Register.Counts counts, long nowMillis) {
        CountsMarkDecision.Verdict v = CountsMarkDecision.decide(w.workerId(), w.range(), firstTime, fences.of(w.workerId()), counts,
                db.metaLong(GcRecords.NEXT_OP_ID, 1));
        switch (v.action()) {
            case LIFT -> fences.clear(w.workerId());
            case FENCE -> {
                try (MetadataBatch b = new MetadataBatch()) {
                    fences.put(b, w.workerId(), v.floor(), nowMillis);
                    db.write(b, true);
                }
            }
            default -> {
            }
        }
        return v;
    }
}
