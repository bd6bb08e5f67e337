package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ReferencedPbns;
import org.holdfast.server.gc.RangeOwnerSweeps;
import org.holdfast.server.store.BadBlocks;

/**
 * The master's round of worker sweeps, then the drop of its bad marks of blocks a swept worker freed
 * (holdfast.cluster.data=workers): the worker's GC frees a PBN, the master's mark would stay for ever
 * (health DEGRADED), where a standalone server's own GC clears it as it frees. A mark goes only when
 * both hold: its worker, swept this cycle, answers a read of the PBN that it holds no record of it
 * ({@link DamagedBlockAnswer#notHeld}), and no map entry of the catalog references it. A worker that
 * still holds the block (rotten), is down, or fails the read keeps the mark: the dedup engine never
 * offers a marked PBN, and a rotten block held unmarked would be taken as a duplicate again. A PBN
 * is never handed out twice, so once freed nothing can come to reference it again. Costs nothing
 * while no block is marked; else one read per mark in a swept range, {@value NotHeldProbe#IN_FLIGHT}
 * in flight per worker ({@link NotHeldProbe}), and one pass over the catalog's maps for all marks
 * whose workers no longer hold them ({@link ReferencedPbns}): thousands of marks after a catalog
 * restore cost seconds per cycle, not minutes.
 */
public final class FreedBadMarks implements RangeOwnerSweeps {
    private static final System.Logger LOG = System.getLogger(FreedBadMarks.class.getName());

    private final WorkerSweeps sweeps;
    private final RangeStores stores;
    private final BadBlocks marks;
    private final Catalog catalog;

    /** After each round of {@code sweeps}, drops the marks in {@code marks} of blocks the swept workers of {@code stores} freed. */
    public FreedBadMarks(WorkerSweeps sweeps, RangeStores stores, BadBlocks marks, Catalog catalog) {
        this.sweeps = sweeps;
        this.stores = stores;
        this.marks = marks;
        this.catalog = catalog;
    }

    @Override
    public List<String> sweep(long now) {
        List<WorkerSweeps.Outcome> outcomes = sweeps.sweep(now, false);
        List<String> lines = new ArrayList<>(outcomes.stream().map(WorkerSweeps::line).toList());
        List<Long> swept = outcomes.stream().filter(o -> o.state() == WorkerSweeps.State.SWEPT).map(WorkerSweeps.Outcome::workerId).toList();
        if (!swept.isEmpty() && !marks.isEmpty()) {
            try {
                lines.add(clear(swept));
            } catch (RuntimeException e) {
                // the marks stay; the next cycle tries again
                LOG.log(System.Logger.Level.WARNING, "bad marks of freed blocks not checked: " + e.getMessage());
                lines.add("bad marks of blocks freed on workers: not checked (" + e.getMessage() + "); they stay, the next cycle tries again");
            }
        }
        return lines;
    }

    /** Clears the marks of the blocks the workers {@code swept} no longer hold and no snapshot references; the job log's line. */
    public String clear(List<Long> swept) {
        long[] marked = marks.all().stream().mapToLong(BadBlocks.BadBlock::pbn).toArray(); // in PBN order
        long[] notHeld = new long[marked.length];
        int freed = 0;
        int asked = 0;
        for (long id : swept) {
            RemoteRangeStore s = stores.up(id);
            if (s == null) {
                continue; // lost since its sweep: its marks stay
            }
            // a range is one run of PBNs: its marks are one slice of the sorted array
            int from = lowerBound(marked, s.range().first());
            long[] mine = Arrays.copyOfRange(marked, from, Math.max(from, lowerBound(marked, s.range().limit())));
            asked += mine.length;
            boolean[] answers = NotHeldProbe.ask(s, mine);
            for (int i = 0; i < mine.length; i++) {
                if (answers[i]) {
                    notHeld[freed++] = mine[i];
                }
            }
        }
        if (asked == 0) {
            return "bad marks of blocks freed on workers: none in the swept workers' ranges";
        }
        // asked first, the catalog read after: a PBN freed on its worker is never handed out again, so no entry can appear later
        long[] unreferenced = freed == 0 ? new long[0] : ReferencedPbns.unreferenced(catalog, Arrays.copyOf(notHeld, freed));
        List<Long> cleared = unreferenced.length == 0 ? List.of() : marks.clearFreed(Arrays.stream(unreferenced).boxed().toList());
        return "bad marks of blocks freed on workers: " + asked + " in the swept workers' ranges, " + freed + " no longer held there, "
                + (freed - unreferenced.length) + " of those still referenced by a snapshot (kept); cleared " + cleared.size()
                + (cleared.isEmpty() ? "" : " " + cleared);
    }

    /** The first index of ascending {@code a} whose value is at least {@code v} ({@code a.length} if none). */
    private static int lowerBound(long[] a, long v) {
        int i = Arrays.binarySearch(a, v);
        return i >= 0 ? i : -i - 1;
    }
}
