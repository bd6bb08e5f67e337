package org.holdfast.server.gc;

import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.retention.RangeMaxExpiry;
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
        return v -> {
            try (SnapshotDelta.Cursor c = delta.cursor()) {
                while (c.next()) {
                    v.accept(c.lbn(), c.beforePbn(), c.beforeBirthSequence(), c.newPbn());
                }
            }
        };
    }

    /**
     * Logs the operations {@code firstId..firstId+parts-1} of commit {@code volume@sequence} whose id
     * is above {@code skipUpTo} (those at or below it are in the GC log already).
     */
    static void log(VolumeId volume, long sequence, RangeMaxExpiry expiries, long firstId, int parts, int partEntries,
                    long skipUpTo, Source source, Sink sink) {
        if (parts == 1) {
            SnapshotDelta all = new SnapshotDelta(64);
            source.forEach(all::add);
            sink.apply(firstId, new GcOperation.Commit(volume, sequence, all.asList(), expiries));
            return;
        }
        int perPhase = parts / 2;
        for (int phase = 0; phase < 2; phase++) {
            long phaseFirst = firstId + (long) phase * perPhase;
            if (phaseFirst + perPhase - 1 <= skipUpTo) {
                continue;
            }
            boolean decrements = phase == 1;
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

    private static void emit(VolumeId volume, long sequence, RangeMaxExpiry expiries, long opId, SnapshotDelta slice,
                             boolean decrements, long skipUpTo, Sink sink) {
        if (opId > skipUpTo) {
            sink.apply(opId, new GcOperation.CommitPart(volume, sequence, slice.asList(), expiries, decrements));
        }
        slice.clear();
    }
}
