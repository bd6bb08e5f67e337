package org.holdfast.server.engine;

import org.holdfast.common.concurrent.Futures;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Rebuilds the dedup index of one worker (the target) that lost it (an empty disk, or a new node
 * that took over its id) from the blocks the store holds, so that the cluster finds their
 * duplicates again ("missed for a while, never invented", issue 18).
 *
 * <p>Fed the store's blocks in PBN order as (PBN, index key) runs, it asks the workers through the
 * messages a backup uses (a probe first with {@link ClusterBroadcast#TWO_PHASE}, then lookups) on a
 * stream of its own, and per entry keeps only what the answers say about that exact PBN: an entry
 * some worker answers with the block's own PBN is held (by another worker, or by the target already,
 * after an earlier, cancelled rebuild) and is not taught, so no index entry is doubled; every other
 * entry is taught to the target in one {@link SegmentRecord} per input segment, with final PBN =
 * the block's PBN and the new flag set, so the target stores them as stored segments with SFI
 * samples in PBN order, which is the store's write order (the segments keep their locality).
 * Nothing is invented: every PBN taught is a block that holds that key, and an answer is only
 * compared, never taken.
 *
 * <p>In {@link ClusterMode#HASH} no worker but the one a key hashes to can hold it, so only the
 * entries whose hash names the target's position among the workers are looked up on the target and
 * taught; the others count as held by others.
 *
 * <p>Workers are given in the master's order (position = the number the master's index gives the
 * worker; in hash mode it decides which keys belong to the target). One thread feeds a rebuild; we
 * own the stream we open on each worker and close it in {@link #close()}, not the workers.
 */
public final class WorkerIndexRebuild implements AutoCloseable {
    /**
     * What a rebuild did so far: blocks read (PBN &gt; 0), taught to the target, held by another
     * worker (or, in hash mode, hashing to another), and held by the target already.
     */
    public record Counts(long blocksRead, long taught, long heldByOthers, long alreadyHeld) {
    }

    private static final byte NOBODY = 0;
    private static final byte OTHER = 1;
    private static final byte TARGET = 2;

    private final List<DedupWorker> workers;
    private final int target;
    private final ClusterMode mode;
    private final ClusterBroadcast broadcast;
    private final InputSegmenter segmenter;
    private final long stream = ClusterFingerprintIndex.nextStreamId();
    /** Per worker the number of this rebuild's lookup in which it last resolved an entry (the affinity of a two-phase broadcast). */
    private final long[] lastResolved;
    private final boolean[] ask;
    private long lookupNo;
    private long[] samples = new long[0];
    private byte[] fps = new byte[0];
    private long[] pbns = new long[0];
    /** Per entry of the segment being taught: who answered it with its own PBN ({@link #NOBODY}, ...). */
    private byte[] holder = new byte[0];
    private long blocksRead;
    private long taught;
    private long heldByOthers;
    private long alreadyHeld;
    private boolean closed;

    /**
     * A rebuild of the worker at position {@code target} of {@code workers} (all the workers up, in
     * the master's order), looking up in {@code mode} and {@code broadcast} and cutting input
     * segments at {@code uSegment} (the workers' U_segment).
     */
    public WorkerIndexRebuild(List<? extends DedupWorker> workers, int target, ClusterMode mode, ClusterBroadcast broadcast,
            int uSegment) {
        if (target < 0 || target >= workers.size()) {
            throw new IllegalArgumentException("target position " + target + " is not one of the " + workers.size() + " workers");
        }
        this.workers = List.copyOf(workers);
        this.target = target;
        this.mode = mode;
        this.broadcast = broadcast;
        this.segmenter = new InputSegmenter(uSegment);
        this.lastResolved = new long[workers.size()];
        Arrays.fill(lastResolved, Long.MIN_VALUE / 2);
        this.ask = new boolean[workers.size()];
    }

    /**
     * Teaches the target what it should hold of {@code count} blocks: {@code blockPbns[i]} (ascending
     * across calls; 0 or less: no block, skipped) whose index key is entry i of {@code keys} (32 bytes
     * each). Cut into input segments at U_segment. A worker's failure is thrown, with what was taught
     * before it kept.
     */
    public void teach(long[] blockPbns, byte[] keys, int count) {
        if (closed) {
            throw new IllegalStateException("the rebuild is closed");
        }
        if (count < 0 || blockPbns.length < count || keys.length < count * 32L) {
            throw new IllegalArgumentException("a run of " + count + " blocks does not fit its arrays");
        }
        if (fps.length < count * 32) {
            fps = new byte[count * 32];
            pbns = new long[count];
        }
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (blockPbns[i] > 0) {
                pbns[n] = blockPbns[i];
                System.arraycopy(keys, i * 32, fps, n * 32, 32);
                n++;
            }
        }
        blocksRead += n;
        for (int s = 0; s < n; ) {
            int e = segmenter.end(s, n);
            byte[] segFps = Arrays.copyOfRange(fps, s * 32, e * 32);
            long[] segPbns = Arrays.copyOfRange(pbns, s, e);
            if (mode == ClusterMode.HASH) {
                teachShare(segFps, segPbns, e - s);
            } else {
                teachSegment(segFps, segPbns, e - s);
            }
            s = e;
        }
    }

    /** Nearest mode: asks the workers (as {@link ClusterDedupStream} would) and teaches what no answer holds. */
    private void teachSegment(byte[] segFps, long[] segPbns, int n) {
        lookupNo++;
        long key = SungemDedupStream.keyOf(segFps, n);
        choose(key, segFps, n);
        SegmentLookup request = new SegmentLookup(stream, segFps, n);
        List<CompletableFuture<SegmentAnswer>> futures = new ArrayList<>();
        for (int w = 0; w < workers.size(); w++) {
            futures.add(ask[w] ? workers.get(w).lookup(request) : null);
        }
        holders(n);
        for (int w = 0; w < workers.size(); w++) {
            if (futures.get(w) == null) {
                continue;
            }
            SegmentAnswer a = Futures.join(futures.get(w));
            for (int i = 0; i < n; i++) {
                long p = a.pbns()[i];
                if (p > 0) {
                    lastResolved[w] = lookupNo;
                }
                if (p == segPbns[i] && holder[i] != TARGET) {
                    holder[i] = w == target ? TARGET : OTHER;
                }
            }
        }
        record(segFps, segPbns, n);
    }

    /**
     * Fills {@link #ask}: every worker with a full broadcast (or one worker); else, after a probe of
     * the sampled entries, those with a candidate container and those that resolved an entry in one
     * of the last {@link ClusterFingerprintIndex#AFFINITY} lookups, as a backup's lookup would.
     */
    private void choose(long key, byte[] segFps, int n) {
        int count = workers.size();
        if (broadcast == ClusterBroadcast.FULL || count == 1) {
            Arrays.fill(ask, true);
            return;
        }
        if (samples.length < n) {
            samples = new long[n];
        }
        int m = ClusterDedupStream.sample(segFps, n, samples);
        SegmentProbe probe = new SegmentProbe(stream, key, n, samples, m);
        List<CompletableFuture<ProbeAnswer>> futures = new ArrayList<>();
        for (DedupWorker w : workers) {
            futures.add(w.probe(probe));
        }
        for (int w = 0; w < count; w++) {
            ask[w] = Futures.join(futures.get(w)).candidates() > 0 || lookupNo - lastResolved[w] <= ClusterFingerprintIndex.AFFINITY;
        }
    }

    /** Hash mode: the entries hashing to the target, looked up there and taught unless it holds them already. */
    private void teachShare(byte[] segFps, long[] segPbns, int n) {
        int count = workers.size();
        byte[] shareFps = new byte[n * 32];
        long[] sharePbns = new long[n];
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (HashSplitDedupStream.workerOf(segFps, i, count) == target) {
                System.arraycopy(segFps, i * 32, shareFps, m * 32, 32);
                sharePbns[m++] = segPbns[i];
            } else {
                heldByOthers++;
            }
        }
        if (m == 0) {
            return;
        }
        SegmentAnswer a = Futures.join(workers.get(target).lookup(new SegmentLookup(stream, shareFps, m)));
        holders(m);
        for (int i = 0; i < m; i++) {
            holder[i] = a.pbns()[i] == sharePbns[i] ? TARGET : NOBODY;
        }
        record(shareFps, sharePbns, m);
    }

    /**
     * Counts the entries by {@link #holder} and sends the target one record of the segment: the
     * block's PBN and the new flag for the entries nobody holds, 0 for the others (the same entries
     * as its lookup or probe, so the target finds that lookup again instead of repeating it).
     */
    private void record(byte[] segFps, long[] segPbns, int n) {
        long[] teach = new long[n];
        boolean[] isNew = new boolean[n];
        int placed = 0;
        for (int i = 0; i < n; i++) {
            switch (holder[i]) {
                case NOBODY -> {
                    teach[i] = segPbns[i];
                    isNew[i] = true;
                    placed++;
                }
                case OTHER -> heldByOthers++;
                default -> alreadyHeld++;
            }
        }
        if (placed > 0) {
            Futures.join(workers.get(target).record(new SegmentRecord(stream, segFps, n, teach, isNew, placed)));
            taught += placed;
        }
    }

    /** Clears {@link #holder} for {@code n} entries. */
    private void holders(int n) {
        if (holder.length < n) {
            holder = new byte[n];
        }
        Arrays.fill(holder, 0, n, NOBODY);
    }

    /** Makes what the target learnt durable ({@link DedupWorker#flush}). */
    public void flushTarget() {
        workers.get(target).flush();
    }

    /** What the rebuild did so far. */
    public Counts counts() {
        return new Counts(blocksRead, taught, heldByOthers, alreadyHeld);
    }

    /** Ends the rebuild's stream on every worker (a worker that fails to hear it has lost the stream with its link anyway). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (DedupWorker w : workers) {
            try {
                w.closeStream(stream);
            } catch (RuntimeException e) {
                // its link is gone, and its streams with it
            }
        }
    }
}
