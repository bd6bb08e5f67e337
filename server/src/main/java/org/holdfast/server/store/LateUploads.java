package org.holdfast.server.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import org.holdfast.server.store.object.ObjectStore;

/**
 * The sealed logs an old node of a worker uploaded under an older takeover epoch after a newer epoch
 * was claimed (data on workers, backend s3): keys under {@code workers/w<id>/e<k>/logs/} with
 * {@code k} below the newest epoch {@code E} that {@code e<E>/adopted} does not list. Nobody reads
 * them: a takeover reads only the newest marker's logs and the newest epoch's, and the owner at
 * {@code E} only what it adopted and its own. So they are deleted, by the owner at {@code E} only
 * (never by a node whose epoch is not the newest), whenever it checks its fence; a concurrent takeover
 * at {@code E + 1} adopts through the same marker and never names one. Markers are kept. A missing or
 * damaged newest marker deletes nothing (a takeover refuses it). Kept, as maybe the last copy of a
 * log's blocks: a late copy of a log id whose adopted copy is gone (an old node that compacted it
 * after the takeover listed the bucket, or a listing that lagged), and a log an earlier marker adopted
 * but the newest does not name in any copy (a takeover whose listing missed it).
 */
public final class LateUploads {
    private static final System.Logger LOG = System.getLogger(LateUploads.class.getName());

    private LateUploads() {
    }

    /** What {@link #find} found: the keys to delete, and late copies kept because the adopted copy of their log id is gone. */
    record Found(List<String> late, List<String> kept) {
    }

    /**
     * The late uploads of worker {@code worker} in {@code listing} (keys under its prefix) for its owner
     * at epoch {@code owner}, reading the newest marker through {@code read} and asking {@code exists}
     * whether an adopted copy is still there before its log id's late copy is given up.
     */
    static Found find(long worker, long owner, List<String> listing, Function<String, byte[]> read, Predicate<String> exists) {
        long newest = RangeTakeover.highestEpoch(worker, listing);
        if (newest < 2 || newest != owner) {
            return new Found(List.of(), List.of()); // only the owner of the newest claim acts on its marker
        }
        String markerKey = WorkerKeys.marker(worker, newest);
        if (!listing.contains(markerKey)) {
            return new Found(List.of(), List.of());
        }
        Map<Long, String> adoptedById = new HashMap<>();
        try {
            for (String k : AdoptedMarker.parse(worker, newest, markerKey, read.apply(markerKey)).logs()) {
                long[] ide = WorkerKeys.log(worker, WorkerKeys.epochOf(worker, k), k);
                if (ide != null) {
                    adoptedById.put(ide[0], k);
                }
            }
        } catch (CorruptDataException e) {
            return new Found(List.of(), List.of());
        }
        Set<String> adopted = new HashSet<>(adoptedById.values());
        Set<String> listed = new HashSet<>(listing);
        Set<String> earlier = null; // read once, if a late key's log is not adopted at all
        List<String> late = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        for (String k : listing) {
            long e = WorkerKeys.epochOf(worker, k);
            long[] ide = e >= 1 && e < newest ? WorkerKeys.log(worker, e, k) : null;
            if (ide == null || adopted.contains(k)) {
                continue;
            }
            String copy = adoptedById.get(ide[0]);
            boolean keep;
            if (copy != null) {
                keep = !listed.contains(copy) || !exists.test(copy); // the adopted copy is gone: this may be the only copy
            } else {
                earlier = earlier != null ? earlier : earlierAdopted(worker, newest, listed, read);
                // an earlier takeover adopted it, the newest did not: a listing that missed it, not an old node's upload
                keep = earlier == null || earlier.contains(k);
            }
            (keep ? kept : late).add(k);
        }
        return new Found(late, kept);
    }

    /**
     * The logs the markers of epochs 2 to {@code newest - 1} in {@code listed} adopted, or null if one
     * of them cannot be read (then no log those markers might name is given up).
     */
    private static Set<String> earlierAdopted(long worker, long newest, Set<String> listed, Function<String, byte[]> read) {
        Set<String> out = new HashSet<>();
        for (long j = 2; j < newest; j++) {
            String key = WorkerKeys.marker(worker, j);
            if (listed.contains(key)) {
                try {
                    out.addAll(AdoptedMarker.parse(worker, j, key, read.apply(key)).logs());
                } catch (CorruptDataException e) {
                    return null;
                }
            }
        }
        return out;
    }

    /**
     * Deletes worker {@code worker}'s late uploads from {@code objects} as its owner at epoch
     * {@code owner}, found in {@code listing} (the caller's listing of {@link WorkerKeys#prefix}; the
     * newest marker read, the earlier ones too if a late key's log is not adopted, a HEAD per adopted
     * copy a late copy of the same log id stands for); returns their keys.
     */
    public static List<String> delete(long worker, long owner, List<String> listing, ObjectStore objects) {
        Found f = find(worker, owner, listing, key -> RangeTakeover.readMarker(objects, key), key -> objects.size(key).isPresent());
        if (!f.kept().isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "kept {0} sealed logs of worker {1} under an epoch below {2} that epoch {2}''s marker"
                    + " does not adopt: the copy of the same log it adopted is gone from the bucket (an old node compacted or deleted it"
                    + " after the takeover listed the bucket), or an earlier marker adopted the log and the takeover''s listing missed"
                    + " it, so these may hold the only copy of blocks the owner cannot read; they are never deleted automatically"
                    + " (docs/architecture.md \"Late uploads\"): {3}",
                    f.kept().size(), Long.toString(worker), Long.toString(owner), f.kept());
        }
        for (String k : f.late()) {
            objects.delete(k);
        }
        return f.late();
    }
}
