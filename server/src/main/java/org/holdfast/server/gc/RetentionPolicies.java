package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.retention.ExpiryCalculator;
import org.holdfast.gc.retention.RetentionExplainer;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.MetadataBatch;

/**
 * Each volume's retention policy: read it, change it, and explain what it keeps. A change applies to new snapshots; an
 * existing snapshot whose expiry it extends gets a raise operation (one scan each); shorter expiries
 * are never applied to existing snapshots (an ET cannot be lowered safely). A change that would
 * shorten retention under an active compliance lock is refused by {@link RetentionLocks}.
 *
 * <p>Lock: a change runs under the commit monitor, so no commit computes an expiry from a policy
 * half replaced and the raise operations get their ids in order.
 */
final class RetentionPolicies {
    private final Catalog catalog;
    private final GcRecords records;
    private final VolumeStates states;
    private final RetentionLocks locks;
    private final OperationLog ops;
    private final Supplier<Object> commitMonitor;
    private final ExpiryCalculator calc = new ExpiryCalculator();

    RetentionPolicies(Catalog catalog, GcRecords records, VolumeStates states, RetentionLocks locks, OperationLog ops,
                      Supplier<Object> commitMonitor) {
        this.catalog = catalog;
        this.records = records;
        this.states = states;
        this.locks = locks;
        this.ops = ops;
        this.commitMonitor = commitMonitor;
    }

    /** The volume's policy as text. */
    String policy(VolumeId volume) {
        return states.of(catalog.requireVolume(volume)).policy.toString();
    }

    /** Sets the volume's policy; raises the expiries it extends. */
    void set(VolumeId volume, String policyText) {
        set(volume, policyText, b -> { });
    }

    /**
     * Sets the volume's policy and adds {@code alongside} (the named-policy assignment) to the batch
     * that stores it, so both change together or not at all; raises the expiries it extends.
     */
    void set(VolumeId volume, String policyText, Consumer<MetadataBatch> alongside) {
        RetentionPolicy policy = RetentionPolicy.parse(policyText);
        synchronized (commitMonitor.get()) {
            VolumeRecord v = catalog.requireVolume(volume);
            VolumeStates.State g = states.of(v);
            locks.checkPolicyChange(v, g.policy, policy);
            try (MetadataBatch batch = new MetadataBatch()) {
                records.putPolicy(batch, v.internalId(), policy.toString());
                alongside.accept(batch);
                catalog.write(batch);
            }
            g.policy = policy;
            List<Long> earlier = new ArrayList<>();
            Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
            for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                gc.put(s.sequence(), s);
            }
            for (SnapshotRecord s : catalog.snapshots(v)) {
                long e = calc.expiryOf(policy, s.createdAtMillis(), earlier);
                earlier.add(s.createdAtMillis());
                GcRecords.SnapshotGc sg = gc.get(s.sequence());
                if (sg == null || e <= sg.expiry()) {
                    continue;
                }
                long opId = ops.nextId();
                try (MetadataBatch batch = new MetadataBatch()) {
                    ops.record(batch, new GcRecords.Op(opId, GcRecords.KIND_RAISE, v.internalId(), s.sequence(), e));
                    records.putSnapshot(batch, v.internalId(), new GcRecords.SnapshotGc(s.sequence(), e, sg.flags()));
                    catalog.write(batch);
                }
                ops.written(opId);
                g.expiries.setExpiry(s.sequence(), e);
                ops.apply(opId, new GcOperation.RaiseExpiry(
                        SnapshotScan.pbns(catalog, v.internalId(), s.sequence(), s.blockCount()), e));
            }
        }
    }

    /** Refuses (nothing changed) if {@code proposed} would shorten retention under a compliance lock of the volume. */
    void check(VolumeRecord v, RetentionPolicy proposed) {
        synchronized (commitMonitor.get()) {
            locks.checkPolicyChange(v, states.of(v).policy, proposed);
        }
    }

    /** True if the volume has a policy of its own; false if it follows the configured default. */
    boolean explicit(VolumeRecord v) {
        return records.policy(v.internalId()) != null;
    }

    /**
     * For each retained snapshot of the volume (by sequence, ascending), whether the GC keeps it at {@code now}, by
     * which rule and until when, under {@code policy} (null: the volume's own). Holds and the GC's
     * recorded expiries count: a policy assigned now would not lower them.
     */
    Map<Long, RetentionExplainer.Verdict> explain(VolumeId volume, RetentionPolicy policy, long now) {
        VolumeRecord v = catalog.requireVolume(volume);
        RetentionPolicy p = policy == null ? states.of(v).policy : policy;
        Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
        for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
            gc.put(s.sequence(), s);
        }
        List<RetentionExplainer.Snapshot> snaps = new ArrayList<>();
        List<Long> earlier = new ArrayList<>();
        List<SnapshotRecord> retained = catalog.snapshots(v);
        for (SnapshotRecord s : retained) {
            GcRecords.SnapshotGc sg = gc.get(s.sequence());
            long fixed = sg == null ? Long.MAX_VALUE : sg.expiry(); // no GC record: never expires by itself
            if (policy != null) {
                // what assigning policy would leave: it raises the expiries it extends, lowers none
                fixed = Math.max(fixed, calc.expiryOf(policy, s.createdAtMillis(), earlier));
            }
            earlier.add(s.createdAtMillis());
            snaps.add(new RetentionExplainer.Snapshot(s.createdAtMillis(), sg != null && sg.held(), fixed));
        }
        List<RetentionExplainer.Verdict> verdicts = new RetentionExplainer().explain(p, snaps, now);
        Map<Long, RetentionExplainer.Verdict> out = new java.util.LinkedHashMap<>();
        for (int i = 0; i < retained.size(); i++) {
            out.put(retained.get(i).sequence(), verdicts.get(i));
        }
        return out;
    }
}
