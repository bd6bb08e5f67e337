package org.holdfast.gc.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaFormat;

/**
 * Walks the GMA in batches of chunks and frees every PBN with RC = 0, ET &lt; now, no pin, not
 * already freed (hybrid GC, thesis 5.5). For each batch:
 * <ol>
 * <li>take the {@link GraceGuard} stripes of the batch's chunks (no new protection can slip in);</li>
 * <li>barrier: every update logged so far is queued, then each chunk is brought up to date under
 *     its lock and re-checked: the decision sees every commit and protection that came before;</li>
 * <li>tombstone the victims, release the stripes;</li>
 * <li>hand them to the {@link BlockReclaimer} (forget fingerprint, free space);</li>
 * <li>then mark them FREED in the GMA and force it.</li>
 * </ol>
 * A crash between 4 and 5 leaves a reclaimed PBN unmarked: the next sweep hands it over again,
 * which the reclaimer accepts. Marking before reclaiming would instead risk a FREED mark on a block
 * whose fingerprint the engine still knows.
 *
 * <p>Callers run the {@code RetentionPlanner} with the same {@code now} before the sweep.
 *
 * <h2>Skip table</h2>
 * A chunk nothing was queued for since its last visit, whose earliest pending expiry lies ahead,
 * has nothing to free and is skipped. The table of what each visit found is kept on disk
 * ({@link SweepSkipTable}), written after each sweep and by {@link #saveSkipTable()} at shutdown,
 * valid as of the highest LSN queued when it was written (chunks touched since their visit are
 * stored as unseen). At construction it is used only if log replay covered every later update
 * (the replay started at or before the LSN after it), and every chunk replay changed is marked
 * unseen; otherwise (lost, damaged, stale) every chunk is visited once, as before. So a skip can
 * only ever delay a free, never cause one.
 */
public final class Sweeper {
    private final BoscPipeline pipeline;
    private final GraceGuard guard;
    private final BlockReclaimer reclaimer;
    private final int batchChunks;
    private static final System.Logger LOG = System.getLogger(Sweeper.class.getName());

    /** What happened to the skip table at construction. */
    public enum SkipTableState { NONE, LOADED, STALE, DAMAGED }

    private final SkipTableState tableState;
    /*
     * What the last visit of each chunk found, so a chunk nothing was queued for since can be skipped
     * while its earliest pending expiry lies ahead. A skip can only delay a free, never cause one:
     * any update marks the chunk touched.
     */
    private boolean[] known = new boolean[0];
    private long[] pendingEt = new long[0]; // min ET of unreferenced, unpinned, unfreed slots; MAX if none
    private long[] keptCounts = new long[0]; // 4 per chunk: referenced, unexpired, pinned, already freed
    private long chunksVisited;
    private long chunksSkipped;

    public Sweeper(BoscPipeline pipeline, GraceGuard guard, BlockReclaimer reclaimer, int batchChunks) {
        this.pipeline = pipeline;
        this.guard = guard;
        this.reclaimer = reclaimer;
        this.batchChunks = Math.max(1, batchChunks);
        this.tableState = loadSkipTable();
    }

    private SkipTableState loadSkipTable() {
        SweepSkipTable.Contents t;
        try {
            t = SweepSkipTable.read(pipeline.dir());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "sweep skip table unusable, the next sweep reads every GMA chunk: " + e.getMessage());
            return SkipTableState.DAMAGED;
        }
        if (t == null) {
            return SkipTableState.NONE;
        }
        // every update after the table's LSN must have been replayed, or a changed chunk could be skipped
        if (t.validLsn() + 1 < pipeline.openedFromLsn() || t.validLsn() >= pipeline.openedNextLsn()) {
            return SkipTableState.STALE;
        }
        int n = t.known().length;
        grow(n);
        System.arraycopy(t.known(), 0, known, 0, n);
        System.arraycopy(t.pendingEt(), 0, pendingEt, 0, n);
        System.arraycopy(t.kept(), 0, keptCounts, 0, 4 * n);
        for (long c : pipeline.replayedChunks()) {
            if (c < n) {
                known[(int) c] = false;
            }
        }
        return SkipTableState.LOADED;
    }

    /** What happened to the on-disk skip table when this sweeper was created. */
    public SkipTableState skipTableState() {
        return tableState;
    }

    /**
     * Writes the skip table (orderly shutdown: call before the pipeline closes, once no more updates
     * are appended). Returns false, logging why, if it could not: that only costs the next start reads.
     */
    public synchronized boolean saveSkipTable() {
        try {
            pipeline.awaitEnqueued();
            persist();
            return true;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "sweep skip table not saved: " + e.getMessage());
            return false;
        }
    }

    /** Caller holds this object's monitor. */
    private void persist() {
        // every update up to this LSN has set its chunk's touched bit before it is read
        long lsn = pipeline.enqueuedLsn();
        int n = 0;
        for (int c = 0; c < known.length; c++) {
            if (known[c] && pipeline.takeTouched(c)) {
                known[c] = false; // changed since its visit: the next sweep must read it
            }
            if (known[c]) {
                n = c + 1;
            }
        }
        SweepSkipTable.write(pipeline.dir(), lsn, n, known, pendingEt, keptCounts);
    }

    /** Frees what is reclaimable at {@code now}. */
    public SweepReport sweep(long now) {
        return run(now, false);
    }

    /** Counts what a sweep would free, changing nothing. */
    public SweepReport dryRun(long now) {
        return run(now, true);
    }

    /** Chunks read by the sweeps so far. */
    public synchronized long chunksVisited() {
        return chunksVisited;
    }

    /** Chunks skipped by the sweeps so far (untouched since a visit, earliest pending expiry ahead). */
    public synchronized long chunksSkipped() {
        return chunksSkipped;
    }

    private void grow(long chunks) {
        if (chunks > known.length) {
            int n = (int) Math.max(chunks, known.length * 2L);
            known = java.util.Arrays.copyOf(known, n);
            pendingEt = java.util.Arrays.copyOf(pendingEt, n);
            keptCounts = java.util.Arrays.copyOf(keptCounts, 4 * n);
        }
    }

    private synchronized SweepReport run(long now, boolean dry) {
        long[] kept = new long[4]; // referenced, unexpired, pinned, alreadyFreed
        long freed = 0;
        long reclaimable = 0;
        pipeline.awaitEnqueued();
        long chunks = pipeline.chunkLimit();
        long visited = 0;
        grow(chunks);
        for (long first = 0; first < chunks; first += batchChunks) {
            long last = Math.min(chunks, first + batchChunks);
            List<long[]> victims = new ArrayList<>();
            long[] pbns = new long[0];
            List<ReentrantLock> held = new ArrayList<>();
            batchEt = new long[(int) (last - first)];
            batchKept = new long[4 * (int) (last - first)];
            batchVisited = new boolean[(int) (last - first)];
            try {
                for (long c = first; c < last; c++) {
                    ReentrantLock l = guard.stripe(c);
                    l.lock();
                    held.add(l);
                }
                pipeline.awaitEnqueued();
                for (long c = first; c < last; c++) {
                    final long chunkIndex = c;
                    final int b = (int) (c - first);
                    // taken before the read: an update queued during or after it marks the chunk again
                    boolean touched = dry || pipeline.takeTouched(c);
                    int ci = (int) c;
                    if (!touched && known[ci] && pendingEt[ci] >= now) {
                        for (int k = 0; k < 4; k++) {
                            kept[k] += keptCounts[4 * ci + k];
                        }
                        chunksSkipped++;
                        continue;
                    }
                    batchVisited[b] = true;
                    visited++;
                    long[] ck = new long[4];
                    long[] et = {Long.MAX_VALUE};
                    pipeline.withCurrentChunk(c, chunk -> collect(chunk, chunkIndex, now, ck, victims, et));
                    for (int k = 0; k < 4; k++) {
                        kept[k] += ck[k];
                        batchKept[4 * b + k] = ck[k];
                    }
                    batchEt[b] = et[0];
                }
                pbns = new long[victims.size()];
                for (int i = 0; i < pbns.length; i++) {
                    pbns[i] = victims.get(i)[0];
                    if (!dry) {
                        guard.tombstone(pbns[i]);
                    }
                }
            } catch (RuntimeException | Error e) {
                unsee(first, last); // a chunk read before the failure had its touched mark taken
                throw e;
            } finally {
                for (ReentrantLock l : held) {
                    l.unlock();
                }
            }
            reclaimable += pbns.length;
            if (dry) {
                continue;
            }
            if (pbns.length > 0) {
                try {
                    reclaimer.reclaim(pbns, pbns.length);
                    markFreed(pbns);
                } catch (RuntimeException | Error e) {
                    unsee(first, last);
                    throw e;
                }
                for (long p : pbns) {
                    guard.reclaimed(p);
                }
                freed += pbns.length;
            }
            // only now (victims freed and marked) may the visit's findings let later sweeps skip
            for (long c = first; c < last; c++) {
                int b = (int) (c - first);
                if (batchVisited[b]) {
                    int ci = (int) c;
                    known[ci] = true;
                    pendingEt[ci] = batchEt[b];
                    System.arraycopy(batchKept, 4 * b, keptCounts, 4 * ci, 4);
                    // the victims are now FREED: count them as such for skipped visits
                    keptCounts[4 * ci + 3] += victimsIn(pbns, c);
                }
            }
        }
        chunksVisited += visited;
        guard.prune();
        if (!dry) {
            try {
                persist();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "sweep skip table not saved: " + e.getMessage());
            }
        }
        return new SweepReport(now, visited, freed, reclaimable, kept[0], kept[1], kept[2], kept[3]);
    }

    /**
     * Reclaim-now's free step: walks the whole GMA in the same batches, under the same stripes and
     * barrier as {@link #sweep}, and frees every used, not yet freed PBN that has RC = 0, no pin, is
     * not in {@code marked} (the exact mark of every retained snapshot, made after {@code inFlight}
     * opened) and was not protected by a backup session ({@code inFlight}), whatever its expiry.
     * Victims go through the same tombstone, {@link BlockReclaimer} and FREED-mark steps as a sweep's,
     * so a crash leaves the same states a crashed sweep does (a reclaimed PBN not yet marked is handed
     * over again by the next reclaim-now; the reclaimer accepts it). {@code listener} sees each
     * batch's victims before they are reclaimed, and each finished batch: a safe point where it may
     * stop the walk by throwing. The skip table forgets every chunk that lost a block.
     *
     * @param now unused: tombstones are dated by the guard's own clock, not by this time
     */
    public synchronized UnmarkedSweepReport sweepUnmarked(LivePbns marked, GraceGuard.Watch inFlight, long now,
                                                          UnmarkedSweepListener listener) {
        long[] kept = new long[5]; // marked, referenced, in flight, pinned, already freed
        long freed = 0;
        long examined = 0;
        pipeline.awaitEnqueued();
        long chunks = pipeline.chunkLimit();
        grow(chunks);
        for (long first = 0; first < chunks; first += batchChunks) {
            long last = Math.min(chunks, first + batchChunks);
            long[][] candidates = {new long[64]};
            int[] n = {0};
            long[] batchExamined = {0};
            List<ReentrantLock> held = new ArrayList<>();
            long[] pbns;
            try {
                for (long c = first; c < last; c++) {
                    ReentrantLock l = guard.stripe(c);
                    l.lock();
                    held.add(l);
                }
                pipeline.awaitEnqueued(); // the decision sees every commit and protection logged so far
                for (long c = first; c < last; c++) {
                    final long chunkIndex = c;
                    pipeline.withCurrentChunk(c, chunk -> {
                        for (int s = 1; s <= GmaFormat.PBNS_PER_CHUNK; s++) {
                            long pbn = pipeline.layout().pbnAt(chunkIndex, s);
                            if (!chunk.used(s) || !pipeline.layout().holds(pbn)) {
                                continue;
                            }
                            batchExamined[0]++;
                            if (chunk.freed(s)) {
                                kept[4]++;
                            } else if (marked.contains(pbn)) {
                                kept[0]++;
                            } else if (chunk.rc(s) != 0) { // counted but unmarked: a bookkeeping error fsck reports; keep it
                                kept[1]++;
                            } else if (chunk.pins(s) > 0) {
                                kept[3]++;
                            } else {
                                if (n[0] == candidates[0].length) {
                                    candidates[0] = java.util.Arrays.copyOf(candidates[0], n[0] * 2);
                                }
                                candidates[0][n[0]++] = pbn;
                            }
                        }
                    });
                }
                int victims = inFlight.dropProtected(candidates[0], n[0]);
                kept[2] += n[0] - victims;
                pbns = java.util.Arrays.copyOf(candidates[0], victims);
                for (long p : pbns) {
                    guard.tombstone(p);
                }
            } finally {
                for (ReentrantLock l : held) {
                    l.unlock();
                }
            }
            examined += batchExamined[0];
            if (pbns.length > 0) {
                listener.freeing(pbns);
                reclaimer.reclaim(pbns, pbns.length);
                markFreed(pbns);
                for (long p : pbns) {
                    guard.reclaimed(p);
                    int c = (int) pipeline.layout().chunkOf(p);
                    known[c] = false; // its counts changed: the next sweep reads it again
                }
                freed += pbns.length;
            }
            listener.batchDone(batchExamined[0], pbns.length);
        }
        guard.prune();
        return new UnmarkedSweepReport(chunks, examined, freed, kept[0], kept[1], kept[2], kept[3], kept[4]);
    }

    private long[] batchEt;
    private long[] batchKept;
    private boolean[] batchVisited;

    /**
     * The batch {@code [first, last)} failed to read or to free its victims (a master's reclaimer
     * refuses while a dedup worker is away): its visit took the chunks' touched marks, so they
     * become unseen and the next sweep reads them again; a chunk still known from an earlier visit
     * with nothing pending would be skipped, its victims left unfreed (and tombstoned) until it is
     * touched again.
     */
    private void unsee(long first, long last) {
        for (long c = first; c < last; c++) {
            if (batchVisited[(int) (c - first)]) {
                known[(int) c] = false;
            }
        }
    }

    private long victimsIn(long[] pbns, long chunk) {
        long n = 0;
        for (long p : pbns) {
            if (pipeline.layout().chunkOf(p) == chunk) {
                n++;
            }
        }
        return n;
    }

    private void collect(GmaChunk chunk, long chunkIndex, long now, long[] kept, List<long[]> victims, long[] minEt) {
        for (int s = 1; s <= GmaFormat.PBNS_PER_CHUNK; s++) {
            if (!chunk.used(s)) {
                continue;
            }
            if (chunk.freed(s)) {
                kept[3]++;
            } else if (chunk.rc(s) != 0) { // a negative RC is a bug: keep the block, fsck reports it
                kept[0]++;
            } else if (chunk.expiry(s) >= now) {
                kept[1]++;
                if (chunk.pins(s) == 0) {
                    minEt[0] = Math.min(minEt[0], chunk.expiry(s));
                }
            } else if (chunk.pins(s) > 0) {
                kept[2]++;
            } else {
                long pbn = pipeline.layout().pbnAt(chunkIndex, s);
                if (pipeline.layout().holds(pbn)) {
                    victims.add(new long[] {pbn});
                }
            }
        }
    }

    private void markFreed(long[] pbns) {
        int i = 0;
        while (i < pbns.length) {
            long c = pipeline.layout().chunkOf(pbns[i]);
            int j = i;
            while (j < pbns.length && pipeline.layout().chunkOf(pbns[j]) == c) {
                j++;
            }
            final int from = i;
            final int to = j;
            pipeline.withCurrentChunk(c, chunk -> {
                for (int k = from; k < to; k++) {
                    chunk.markFreed(pipeline.layout().slotOf(pbns[k]));
                }
            });
            i = j;
        }
        pipeline.syncGma();
    }
}
