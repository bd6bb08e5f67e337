package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.retention.ExpiryCalculator;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.rocksdb.WriteBatch;

/**
 * Each volume's retention policy: read it, and change it. A change applies to new snapshots; an
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
        RetentionPolicy policy = RetentionPolicy.parse(policyText);
        synchronized (commitMonitor.get()) {
            VolumeRecord v = catalog.requireVolume(volume);
            VolumeStates.State g = states.of(v);
            locks.checkPolicyChange(v, g.policy, policy);
            try (WriteBatch batch = new WriteBatch()) {
                records.putPolicy(batch, v.internalId(), policy.toString());
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
                try (WriteBatch batch = new WriteBatch()) {
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
}
