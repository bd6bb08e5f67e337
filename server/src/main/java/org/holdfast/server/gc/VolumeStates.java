package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;

/**
 * The in-memory GC state of each volume (its policy, its snapshots' expiries for
 * {@link RangeMaxExpiry}, their creation times for the expiry arithmetic), loaded from the catalog
 * on first use.
 *
 * <p>Lock: the map is guarded by its own monitor (always the innermost lock). A state's fields are
 * changed under the commit monitor, because commits read them there; the retention cycle and
 * {@code policy()} read {@code policy} without it, as before the split.
 */
final class VolumeStates {
    /** One volume's state. */
    static final class State {
        RetentionPolicy policy;
        final RangeMaxExpiry expiries = new RangeMaxExpiry();
        final List<Long> history = new ArrayList<>();
    }

    private final Catalog catalog;
    private final GcRecords records;
    private final String defaultPolicy;
    private final Map<Long, State> volumes = new HashMap<>();

    VolumeStates(Catalog catalog, GcRecords records, String defaultPolicy) {
        this.catalog = catalog;
        this.records = records;
        this.defaultPolicy = defaultPolicy;
    }

    /** The volume's state, loaded now if this is its first use. */
    State of(VolumeRecord v) {
        synchronized (volumes) {
            State g = volumes.get(v.internalId());
            if (g != null) {
                return g;
            }
            g = new State();
            String p = records.policy(v.internalId());
            g.policy = RetentionPolicy.parse(p == null ? defaultPolicy : p);
            Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
            for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                gc.put(s.sequence(), s);
            }
            for (SnapshotRecord s : catalog.snapshots(v)) {
                GcRecords.SnapshotGc sg = gc.get(s.sequence());
                // a snapshot from before GC records existed never expires by itself: safe
                g.expiries.append(s.sequence(), sg == null ? Long.MAX_VALUE : sg.expiry());
                g.history.add(s.createdAtMillis());
            }
            volumes.put(v.internalId(), g);
            return g;
        }
    }

    /** Drops a deleted volume's state. */
    void forget(long internalId) {
        synchronized (volumes) {
            volumes.remove(internalId);
        }
    }
}
