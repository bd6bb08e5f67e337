package org.holdfast.server.volumes;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.LocationIndex;

/**
 * What a volume costs in storage, from the catalog's map (docs/api.md, "Volume details"):
 * <ul>
 * <li>{@code newestBytes}: stored bytes of the distinct blocks its newest snapshot references;
 * <li>{@code retainedBytes}: stored bytes of the distinct blocks any of its retained snapshots references;
 * <li>{@code uniqueBytes}: the part of {@code retainedBytes} that no retained snapshot of another
 * volume references: what deleting the volume would free in the end.
 * </ul>
 * Stored bytes are the compressed lengths the location index records; zero blocks count nothing.
 *
 * <p>Cost: one scan of the map entries of every volume of the volume's dedup domain (blocks are
 * never shared across domains) and memory of 8 bytes per distinct block the volume references. A
 * volume over {@link #MAX_BLOCKS} distinct blocks is not measured (null figures). Results are
 * cached per volume and reused while no snapshot of the domain was committed or deleted (the cache
 * key is a digest of every retained snapshot's id, which costs one read of the snapshot records).
 * Thread-safe: one computation at a time.
 */
public final class VolumeUsage {
    /** Map entries at which a volume is no longer measured (256 MiB of PBNs). */
    public static final int MAX_BLOCKS = 32 << 20;

    private final Catalog catalog;
    private final LocationIndex locations;
    private final int maxBlocks;
    private final Map<Long, Cached> cache = new HashMap<>();

    /** The figures; all null when the volume was too large to measure. */
    public record Usage(Long newestBytes, Long retainedBytes, Long uniqueBytes) {
    }

    private record Cached(long signature, Usage usage) {
    }

    public VolumeUsage(Catalog catalog, LocationIndex locations) {
        this(catalog, locations, MAX_BLOCKS);
    }

    VolumeUsage(Catalog catalog, LocationIndex locations, int maxBlocks) {
        this.catalog = catalog;
        this.locations = locations;
        this.maxBlocks = maxBlocks;
    }

    /** The volume's figures, computed now or taken from the cache. */
    public synchronized Usage of(VolumeRecord volume) {
        List<VolumeRecord> domain = new ArrayList<>();
        Map<Long, List<SnapshotRecord>> snapshots = new HashMap<>();
        long signature = 17;
        for (VolumeRecord v : catalog.volumes()) {
            if (!v.domain().equals(volume.domain())) {
                continue;
            }
            List<SnapshotRecord> s = catalog.snapshots(v);
            domain.add(v);
            snapshots.put(v.internalId(), s);
            signature = signature * 31 + v.internalId();
            for (SnapshotRecord r : s) {
                signature = signature * 31 + r.sequence();
            }
            signature = signature * 31 - 1;
        }
        Cached c = cache.get(volume.internalId());
        if (c != null && c.signature() == signature) {
            return c.usage();
        }
        Usage u = compute(volume, domain, snapshots);
        cache.put(volume.internalId(), new Cached(signature, u));
        return u;
    }

    /** Drops what is cached for a deleted volume. */
    public synchronized void forget(long internalId) {
        cache.remove(internalId);
    }

    private Usage compute(VolumeRecord volume, List<VolumeRecord> domain, Map<Long, List<SnapshotRecord>> snapshots) {
        List<SnapshotRecord> own = snapshots.getOrDefault(volume.internalId(), List.of());
        if (own.isEmpty()) {
            return new Usage(0L, 0L, 0L);
        }
        SnapshotRecord newest = own.get(own.size() - 1);
        PbnList all = new PbnList(maxBlocks);
        PbnList inNewest = new PbnList(maxBlocks);
        boolean fits = visit(volume, own, (pbn, visibleInNewest) -> {
            all.add(pbn);
            if (visibleInNewest) {
                inNewest.add(pbn);
            }
            return !all.full() && !inNewest.full();
        }, newest);
        if (!fits) {
            return new Usage(null, null, null);
        }
        long[] mine = all.sortedDistinct();
        long[] newestPbns = inNewest.sortedDistinct();
        boolean[] shared = new boolean[mine.length];
        for (VolumeRecord other : domain) {
            if (other.internalId() == volume.internalId()) {
                continue;
            }
            List<SnapshotRecord> theirs = snapshots.get(other.internalId());
            if (theirs == null || theirs.isEmpty()) {
                continue;
            }
            visit(other, theirs, (pbn, ignored) -> {
                int i = Arrays.binarySearch(mine, pbn);
                if (i >= 0) {
                    shared[i] = true;
                }
                return true;
            }, null);
        }
        long[] unique = new long[mine.length];
        int n = 0;
        for (int i = 0; i < mine.length; i++) {
            if (!shared[i]) {
                unique[n++] = mine[i];
            }
        }
        return new Usage(locations.storedBytes(newestPbns, newestPbns.length), locations.storedBytes(mine, mine.length),
                locations.storedBytes(unique, n));
    }

    /** Receives a non-zero PBN that a retained snapshot sees; false stops the scan. */
    @FunctionalInterface
    private interface PbnSink {
        boolean accept(long pbn, boolean visibleInNewest);
    }

    /**
     * Visits each map entry of {@code v} that a retained snapshot sees: entry (lbn, birth) is seen by
     * the snapshots from its birth up to the next newer entry of that LBN. Returns false if stopped.
     */
    private boolean visit(VolumeRecord v, List<SnapshotRecord> retained, PbnSink sink, SnapshotRecord newest) {
        long[] seqs = retained.stream().mapToLong(SnapshotRecord::sequence).toArray();
        long[] blocks = retained.stream().mapToLong(SnapshotRecord::blockCount).toArray();
        long[] prev = {-1, Long.MAX_VALUE}; // lbn, birth of the newer entry seen last
        boolean[] stopped = {false};
        catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
            long newer = lbn == prev[0] ? prev[1] : Long.MAX_VALUE;
            prev[0] = lbn;
            prev[1] = birth;
            if (pbn == 0) {
                return true;
            }
            // first retained snapshot at or after the birth, still before the newer entry, and long enough to hold the LBN
            int i = Arrays.binarySearch(seqs, birth);
            i = i >= 0 ? i : -i - 1;
            boolean seen = false;
            for (; i < seqs.length && seqs[i] < newer; i++) {
                if (lbn < blocks[i]) {
                    seen = true;
                    break;
                }
            }
            if (!seen) {
                return true;
            }
            boolean inNewest = newest != null && birth <= newest.sequence() && newest.sequence() < newer && lbn < newest.blockCount();
            if (!sink.accept(pbn, inNewest)) {
                stopped[0] = true;
                return false;
            }
            return true;
        });
        return !stopped[0];
    }

    /** A growable list of PBNs with a hard cap. */
    private static final class PbnList {
        private final int cap;
        private long[] a;
        private int n;

        PbnList(int cap) {
            this.cap = cap;
            this.a = new long[Math.min(1024, cap)];
        }

        void add(long pbn) {
            if (n == a.length) {
                a = Arrays.copyOf(a, (int) Math.min((long) a.length * 2, cap));
            }
            a[n++] = pbn;
        }

        boolean full() {
            return n >= cap;
        }

        long[] sortedDistinct() {
            Arrays.sort(a, 0, n);
            int m = 0;
            for (int i = 0; i < n; i++) {
                if (m == 0 || a[i] != a[m - 1]) {
                    a[m++] = a[i];
                }
            }
            return Arrays.copyOf(a, m);
        }
    }
}
