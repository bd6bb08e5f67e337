package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.VolumeRecord;
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
 * while no block is marked; else one read per mark in a swept range, and one scan of the catalog's
 * maps only if some worker no longer holds a marked PBN.
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
        List<BadBlocks.BadBlock> all = marks.all();
        Set<Long> notHeld = new HashSet<>();
        int asked = 0;
        for (long id : swept) {
            RemoteRangeStore s = stores.up(id);
            if (s == null) {
                continue; // lost since its sweep: its marks stay
            }
            for (BadBlocks.BadBlock b : all) {
                if (s.range().contains(b.pbn())) {
                    asked++;
                    if (notHeld(s, b.pbn())) {
                        notHeld.add(b.pbn());
                    }
                }
            }
        }
        if (asked == 0) {
            return "bad marks of blocks freed on workers: none in the swept workers' ranges";
        }
        int freed = notHeld.size();
        dropReferenced(notHeld);
        List<Long> cleared = notHeld.isEmpty() ? List.of() : marks.clearFreed(notHeld.stream().sorted().toList());
        return "bad marks of blocks freed on workers: " + asked + " in the swept workers' ranges, " + freed + " no longer held there, "
                + (freed - notHeld.size()) + " of those still referenced by a snapshot (kept); cleared " + cleared.size()
                + (cleared.isEmpty() ? "" : " " + cleared);
    }

    /** True only if the worker answers a read of {@code pbn} that it holds no record of it; any other answer or failure: false. */
    private static boolean notHeld(RemoteRangeStore s, long pbn) {
        try {
            s.readSome(new long[] {pbn}, 0, 1).join();
            return false; // it reads sound there (repaired meanwhile): the next backup's repair or verify deals with the mark
        } catch (CompletionException e) {
            return e.getCause() instanceof RangeBlockDamagedException d && d.answer().pbn() == pbn && d.answer().notHeld();
        }
    }

    /** Removes from {@code pbns} every PBN a map entry of any volume references (any version: deleted snapshots not yet pruned count). */
    private void dropReferenced(Set<Long> pbns) {
        for (VolumeRecord v : catalog.volumes()) {
            if (pbns.isEmpty()) {
                return;
            }
            catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
                pbns.remove(pbn);
                return !pbns.isEmpty();
            });
        }
    }
}
