package org.holdfast.server.gc;

import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotDelta;

/**
 * Logs one commit's GC bookkeeping without holding its delta: a commit of more than
 * {@code partEntries} delta entries is logged as {@code 2P} operations with consecutive ids, P =
 * ceil(entries / partEntries): first the increments of each slice of {@code partEntries} entries
 * in LBN order, then the decrements of each slice. The increments all come first so that no
 * reference count drops below the truth while the parts are logged (a sweep between two parts sees
 * counts that are too high, never too low). A smaller commit is one operation, as before.
 *
 * <p>The same slicing serves the commit (its delta read back from memory or its spill file) and the
 * re-drive after a crash (the delta rebuilt from the map): both read the same entries in the same
 * order, so part k holds the same entries either way and a part the GC log already has is skipped
 * by its id. A re-drive that finds fewer entries than were committed still logs every id (empty
 * parts), so the operation counter and the record's trim stay consistent.
 */
final class CommitParts {
    /** Delta entries per part by default: about 3 MiB of GMA updates in the heap at a time. */
    static final int DEFAULT_PART_ENTRIES = 65_536;

    /** Delivers the delta's entries in LBN order, once per call. */
    @FunctionalInterface
    interface Source {
        void forEach(SnapshotScan.DeltaVisitor visitor);

        /** The whole delta as a list if it is in memory already (no copy needed), else null. */
        default List<DeltaEntry> inMemory() {
            return null;
        }
    }

    /** Logs one operation. */
    @FunctionalInterface
    interface Sink {
        void apply(long opId, GcOperation op);
    }

    private CommitParts() {
    }

    /** How many operations a commit of {@code entries} delta entries is logged as. */
    static int partsFor(long entries, int partEntries) {
        if (entries <= partEntries) {
            return 1;
        }
        long p = (entries + partEntries - 1) / partEntries;
        if (p > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("a delta of " + entries + " entries needs more than 2^31 parts of " + partEntries);
        }
        return (int) (2 * p);
    }

    /** A source reading a commit's delta (in memory or spilled). */
    static Source of(SnapshotDelta delta) {
        return new Source() {
            @Override
            public void forEach(SnapshotScan.DeltaVisitor v) {
                try (SnapshotDelta.Cursor c = delta.cursor()) {
                    boolean more = true;
                    while (more) {
                        more = visitSlice(c, v);
                    }
                }
            }

            @Override
            public List<DeltaEntry> inMemory() {
                return delta.spilledEntries() == 0 ? delta.asList() : null;
            }
        };
    }

    /** Visits up to {@link SnapshotCommit#SLICE} entries (a compiled call per slice, not one interpreted loop); false at the end. */
    private static boolean visitSlice(SnapshotDelta.Cursor c, SnapshotScan.DeltaVisitor v) {
        for (int i = 0; i < SnapshotCommit.SLICE; i++) {
            if (!c.next()) {
                return false;
            }
            v.accept(c.lbn(), c.beforePbn(), c.beforeBirthSequence(), c.newPbn());
        }
        return true;
    }

    /**
     * Logs the operations {@code firstId..firstId+parts-1} of commit {@code volume@sequence} whose id
     * is above {@code skipUpTo} (those at or below it are in the GC log already).
     */
    static void log(VolumeId volume, long sequence, RangeMaxExpiry expiries, long firstId, int parts, int partEntries,
                    long skipUpTo, Source source, Sink sink) {
        // a delta in memory is logged as it is, a part a view of its slice: copying it into the
        // parts (232,000 entries for a GiB, twice) cost as much as the rest of the logging
        List<DeltaEntry> whole = source.inMemory();
        if (parts == 1) {
            if (whole == null) {
                SnapshotDelta all = new SnapshotDelta(64);
                source.forEach(all::add);
                whole = all.asList();
            }
            sink.apply(firstId, new GcOperation.Commit(volume, sequence, whole, expiries));
            return;
        }
        int perPhase = parts / 2;
        for (int phase = 0; phase < 2; phase++) {
            long phaseFirst = firstId + (long) phase * perPhase;
            if (phaseFirst + perPhase - 1 <= skipUpTo) {
                continue;
            }
            boolean decrements = phase == 1;
            if (whole != null) {
                logViews(volume, sequence, expiries, phaseFirst, perPhase, partEntries, skipUpTo, whole, decrements, sink);
                continue;
            }
            SnapshotDelta slice = new SnapshotDelta(Math.min(partEntries, 1 << 16));
            long[] next = {phaseFirst};
            source.forEach((lbn, before, birth, after) -> {
                slice.add(lbn, before, birth, after);
                if (slice.size() == partEntries && next[0] < phaseFirst + perPhase - 1) {
                    emit(volume, sequence, expiries, next[0]++, slice, decrements, skipUpTo, sink);
                }
            });
            // the last part takes whatever is left; then any ids a shorter delta did not fill
            while (next[0] < phaseFirst + perPhase) {
                emit(volume, sequence, expiries, next[0]++, slice, decrements, skipUpTo, sink);
            }
        }
    }

    /** One phase's parts as views of the in-memory delta, split exactly as the copying path splits a source. */
    private static void logViews(VolumeId volume, long sequence, RangeMaxExpiry expiries, long phaseFirst, int perPhase,
                                 int partEntries, long skipUpTo, List<DeltaEntry> whole, boolean decrements, Sink sink) {
        int n = whole.size();
        for (int k = 0; k < perPhase; k++) {
            long opId = phaseFirst + k;
            if (opId <= skipUpTo) {
                continue;
            }
            int from = (int) Math.min(n, (long) k * partEntries);
            int to = k == perPhase - 1 ? n : (int) Math.min(n, (long) (k + 1) * partEntries);
            sink.apply(opId, new GcOperation.CommitPart(volume, sequence, whole.subList(from, to), expiries, decrements));
        }
    }

    private static void emit(VolumeId volume, long sequence, RangeMaxExpiry expiries, long opId, SnapshotDelta slice,
                             boolean decrements, long skipUpTo, Sink sink) {
        if (opId > skipUpTo) {
            sink.apply(opId, new GcOperation.CommitPart(volume, sequence, slice.asList(), expiries, decrements));
        }
        slice.clear();
    }
}
