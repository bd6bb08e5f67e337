package org.holdfast.server.store;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.holdfast.server.store.object.ObjectStore;

/**
 * The sealed logs an old node of a worker uploaded under an older takeover epoch after a newer epoch
 * was claimed (data on workers, backend s3): keys under {@code workers/w<id>/e<k>/logs/} with
 * {@code k} below the newest epoch {@code E} that {@code e<E>/adopted} does not list. Nobody reads
 * them: a takeover reads only the newest marker's logs and the newest epoch's, and the owner at
 * {@code E} only what it adopted and its own. So they are deleted, by the owner, whenever it checks
 * its fence; a concurrent takeover at {@code E + 1} adopts through the same marker and never names
 * one. Markers are kept. A missing or damaged newest marker deletes nothing (a takeover refuses it).
 */
public final class LateUploads {
    private LateUploads() {
    }

    /** The late uploads of worker {@code worker} in {@code listing} (keys under its prefix), reading the newest marker through {@code read}. */
    static List<String> find(long worker, List<String> listing, Function<String, byte[]> read) {
        long newest = RangeTakeover.highestEpoch(worker, listing);
        if (newest < 2) {
            return List.of();
        }
        String markerKey = WorkerKeys.marker(worker, newest);
        if (!listing.contains(markerKey)) {
            return List.of();
        }
        Set<String> adopted;
        try {
            adopted = new HashSet<>(AdoptedMarker.parse(worker, newest, markerKey, read.apply(markerKey)).logs());
        } catch (CorruptDataException e) {
            return List.of();
        }
        List<String> late = new ArrayList<>();
        for (String k : listing) {
            long e = WorkerKeys.epochOf(worker, k);
            if (e >= 1 && e < newest && WorkerKeys.log(worker, e, k) != null && !adopted.contains(k)) {
                late.add(k);
            }
        }
        return late;
    }

    /** Deletes worker {@code worker}'s late uploads from {@code objects} (one listing, one marker read); returns their keys. */
    public static List<String> delete(long worker, ObjectStore objects) {
        List<String> late = find(worker, objects.list(WorkerKeys.prefix(worker)), key -> RangeTakeover.readMarker(objects, key));
        for (String k : late) {
            objects.delete(k);
        }
        return late;
    }
}
