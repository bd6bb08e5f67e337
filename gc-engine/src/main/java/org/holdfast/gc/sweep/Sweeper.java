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
 */
public final class Sweeper {
    private final BoscPipeline pipeline;
    private final GraceGuard guard;
    private final BlockReclaimer reclaimer;
    private final int batchChunks;

    public Sweeper(BoscPipeline pipeline, GraceGuard guard, BlockReclaimer reclaimer, int batchChunks) {
        this.pipeline = pipeline;
        this.guard = guard;
        this.reclaimer = reclaimer;
        this.batchChunks = Math.max(1, batchChunks);
    }

    /** Frees what is reclaimable at {@code now}. */
    public SweepReport sweep(long now) {
        return run(now, false);
    }

    /** Counts what a sweep would free, changing nothing. */
    public SweepReport dryRun(long now) {
        return run(now, true);
    }

    private SweepReport run(long now, boolean dry) {
        long[] kept = new long[4]; // referenced, unexpired, pinned, alreadyFreed
        long freed = 0;
        long reclaimable = 0;
        pipeline.awaitEnqueued();
        long chunks = pipeline.chunkLimit();
        for (long first = 0; first < chunks; first += batchChunks) {
            long last = Math.min(chunks, first + batchChunks);
            List<long[]> victims = new ArrayList<>();
            long[] pbns = new long[0];
            List<ReentrantLock> held = new ArrayList<>();
            try {
                for (long c = first; c < last; c++) {
                    ReentrantLock l = guard.stripe(c);
                    l.lock();
                    held.add(l);
                }
                pipeline.awaitEnqueued();
                for (long c = first; c < last; c++) {
                    final long chunkIndex = c;
                    pipeline.withCurrentChunk(c, chunk -> collect(chunk, chunkIndex, now, kept, victims));
                }
                pbns = new long[victims.size()];
                for (int i = 0; i < pbns.length; i++) {
                    pbns[i] = victims.get(i)[0];
                    if (!dry) {
                        guard.tombstone(pbns[i]);
                    }
                }
            } finally {
                for (ReentrantLock l : held) {
                    l.unlock();
                }
            }
            reclaimable += pbns.length;
            if (dry || pbns.length == 0) {
                continue;
            }
            reclaimer.reclaim(pbns, pbns.length);
            markFreed(pbns);
            for (long p : pbns) {
                guard.reclaimed(p, now);
            }
            freed += pbns.length;
        }
        guard.prune(now);
        return new SweepReport(now, chunks, freed, reclaimable, kept[0], kept[1], kept[2], kept[3]);
    }

    private static void collect(GmaChunk chunk, long chunkIndex, long now, long[] kept, List<long[]> victims) {
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
            } else if (chunk.pins(s) > 0) {
                kept[2]++;
            } else {
                long pbn = GmaFormat.pbnAt(chunkIndex, s);
                if (pbn != 0) {
                    victims.add(new long[] {pbn});
                }
            }
        }
    }

    private void markFreed(long[] pbns) {
        int i = 0;
        while (i < pbns.length) {
            long c = GmaFormat.chunkOf(pbns[i]);
            int j = i;
            while (j < pbns.length && GmaFormat.chunkOf(pbns[j]) == c) {
                j++;
            }
            final int from = i;
            final int to = j;
            pipeline.withCurrentChunk(c, chunk -> {
                for (int k = from; k < to; k++) {
                    chunk.markFreed(GmaFormat.slotOf(pbns[k]));
                }
            });
            i = j;
        }
        pipeline.syncGma();
    }
}
