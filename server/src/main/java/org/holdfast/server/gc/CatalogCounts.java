package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.gma.GmaLayout;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;

/**
 * The reference count, expiry and pins of every PBN of one PBN range as the catalog gives them, by
 * the rule {@link GcMetadataRebuild} documents: counted one pass of PBNs at a time ({@link Pass}),
 * each pass reading every volume's map once. Shared by the rebuild of a server's own GC metadata
 * (its store's range) and the export of a worker's counts ({@link WorkerGcExport}: the worker's
 * range), so both follow one rule. The catalog must not change meanwhile (its server is stopped; the
 * online {@link ClusterCountsCheck} holds the commit monitor over one construction and scan).
 */
final class CatalogCounts {
    /** A {@link Pass#flags} bit: some map entry of a retained snapshot reads the PBN. */
    static final byte REFERENCED = 1;

    private final Catalog catalog;
    private final GmaLayout layout;
    private final GcMetadataRebuild.Progress progress;
    private final List<VolumePlan> plans = new ArrayList<>();
    private int snapshots;
    private long mapEntries;

    /** One volume's retained snapshots as the counting needs them; {@code pinned} sorted, a sequence once per pin. */
    private record VolumePlan(VolumeRecord volume, RangeMaxExpiry expiries, long[] pinned, int snapshots) {
        long pinsIn(long from, long to) {
            int end = to == Long.MAX_VALUE ? pinned.length : lowerBound(pinned, to + 1);
            return end - lowerBound(pinned, from);
        }
    }

    /** The PBNs [lo, lo + size) of one pass, in primitive arrays; {@code flags} has bits for the caller beside {@link #REFERENCED}. */
    static final class Pass {
        final long lo;
        final int[] rc;
        final int[] pins;
        final long[] et;
        final byte[] flags;

        Pass(long lo, int size) {
            this.lo = lo;
            rc = new int[size];
            pins = new int[size];
            et = new long[size];
            flags = new byte[size];
        }

        int slot(long pbn) {
            long i = pbn - lo;
            return i >= 0 && i < rc.length ? (int) i : -1;
        }
    }

    /** Counts for the PBNs {@code layout} holds; reads the volumes and their snapshots' GC records now. */
    CatalogCounts(Catalog catalog, GmaLayout layout, GcMetadataRebuild.Progress progress) {
        this.catalog = catalog;
        this.layout = layout;
        this.progress = progress;
        planVolumes();
    }

    /** Volumes with retained snapshots. */
    int volumes() {
        return plans.size();
    }

    /** Retained snapshots over all volumes. */
    int snapshots() {
        return snapshots;
    }

    /** Map entries of retained snapshots read by the latest {@link #scan}. */
    long mapEntries() {
        return mapEntries;
    }

    private void planVolumes() {
        GcRecords records = new GcRecords(catalog.db());
        for (VolumeRecord v : catalog.volumes()) {
            List<SnapshotRecord> snaps = catalog.snapshots(v);
            if (snaps.isEmpty()) {
                continue; // a volume deletion in progress: its newest state was released already
            }
            Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
            for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                gc.put(s.sequence(), s);
            }
            RangeMaxExpiry expiries = new RangeMaxExpiry();
            long[] pinned = new long[2 * snaps.size()];
            int np = 0;
            for (SnapshotRecord s : snaps) {
                GcRecords.SnapshotGc sg = gc.get(s.sequence());
                // a snapshot from before GC records existed never expires by itself (as GcService reads it)
                expiries.append(s.sequence(), sg == null ? Long.MAX_VALUE : sg.expiry());
                // a hold and a keep-last pin are separate pin operations: each adds its own pin
                if (sg != null && sg.held()) {
                    pinned[np++] = s.sequence();
                }
                if (sg != null && sg.keepLastPinned()) {
                    pinned[np++] = s.sequence();
                }
            }
            plans.add(new VolumePlan(v, expiries, Arrays.copyOf(pinned, np), snaps.size()));
            snapshots += snaps.size();
        }
    }

    /**
     * Accounts every map entry whose PBN lies in the pass (RC, ET, pins and {@link #REFERENCED});
     * returns one past the highest PBN of the layout's range seen in any map (0 if none).
     */
    long scan(Pass p) {
        long[] max = {0};
        int i = 0;
        mapEntries = 0;
        for (VolumePlan plan : plans) {
            i++;
            long[] state = {-1, Long.MAX_VALUE}; // current lbn, birth of its next newer entry
            long[] entries = {0};
            long latest = plan.volume().latestSequence();
            catalog.forEachMapEntry(plan.volume().internalId(), (lbn, birth, pbn) -> {
                if (birth > latest) {
                    return true; // left by a commit a crash stopped before its switch: in no snapshot (removed at the next start)
                }
                entries[0]++;
                if (lbn != state[0]) {
                    state[0] = lbn;
                    state[1] = Long.MAX_VALUE;
                }
                long newer = state[1];
                state[1] = birth;
                if (!layout.holds(pbn)) {
                    return true; // the zero block, or another node's PBN: this GMA keeps none of it
                }
                max[0] = Math.max(max[0], pbn + 1);
                int s = p.slot(pbn);
                if (s < 0) {
                    return true;
                }
                long lastSeer = newer == Long.MAX_VALUE ? Long.MAX_VALUE : newer - 1;
                if (newer == Long.MAX_VALUE) {
                    p.rc[s]++;
                    p.flags[s] |= REFERENCED;
                } else {
                    long e = plan.expiries().max(birth, lastSeer);
                    if (e != RangeMaxExpiry.NONE) {
                        p.et[s] = Math.max(p.et[s], e);
                        p.flags[s] |= REFERENCED;
                    }
                }
                long pins = plan.pinsIn(birth, lastSeer);
                if (pins > 0) {
                    p.pins[s] = (int) Math.min(GmaFormat.MAX_PINS, p.pins[s] + pins);
                    p.flags[s] |= REFERENCED;
                }
                return true;
            });
            mapEntries += entries[0];
            progress.step("  volume " + i + "/" + plans.size() + " '" + plan.volume().name().name() + "': "
                    + plan.snapshots() + " snapshots, " + entries[0] + " map entries");
        }
        return max[0];
    }

    private static int lowerBound(long[] sorted, long v) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] < v) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
