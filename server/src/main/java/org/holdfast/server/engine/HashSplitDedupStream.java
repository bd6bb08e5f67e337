package org.holdfast.server.engine;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * One backup session on the master in {@link ClusterMode#HASH} mode, the naive design of thesis
 * 7.2.5: each call's entries are split by a hash of their fingerprint, and every worker runs the
 * unmodified engine on its share, lookups and stores alike. No broadcast and no merge, so the
 * master's work per entry is constant; but each worker sees a 1/N thinning of every segment, so
 * runs are short and every worker loads the containers of every segment: more container I/O than
 * nearest mode (twice as much at 4 workers in docs/benchmarks.md) and a little less dedup, which
 * pays only where the workload is not disk-bound.
 *
 * <p>The split is recomputed on record (it is a function of the fingerprints), so nothing is kept
 * between the calls; the worker's own stream finds its saved matches by its share's fingerprints.
 * For the same reason the storing worker of an entry ({@link #storingWorkers}) is its hash owner,
 * miss or resolved alike: no placement rule, no home worker; the last lookup's owners are kept only
 * to answer that call.
 */
final class HashSplitDedupStream extends MasterDedupStream {
    private final byte[][] shareFps;
    private final int[][] shareIndex;
    private final long[][] sharePbns;
    private final boolean[][] shareNew;
    private final int[] shareCount;
    /** The hash owner of each entry of the last lookup; {@link #lastCount} of them, -1 before any. */
    private int[] lastOwners = new int[0];
    private int lastCount = -1;

    HashSplitDedupStream(ClusterFingerprintIndex idx, long id) {
        super(idx, id);
        int n = workers.size();
        shareFps = new byte[n][0];
        shareIndex = new int[n][0];
        sharePbns = new long[n][0];
        shareNew = new boolean[n][0];
        shareCount = new int[n];
    }

    /**
     * The worker of entry {@code i}: from word 2, because word 0's leading zeros pick the SFI samples
     * and a split by them would send every sample to one worker.
     */
    static int workerOf(byte[] fps, int i, int n) {
        long h = FingerprintWords.word(fps, i, 2) * 0x9E3779B97F4A7C15L;
        return (int) Long.remainderUnsigned(h >>> 1, n);
    }

    private void split(byte[] fps, int count) {
        int n = workers.size();
        Arrays.fill(shareCount, 0);
        for (int w = 0; w < n; w++) {
            if (shareIndex[w].length < count) {
                shareIndex[w] = new int[count];
                shareFps[w] = new byte[count * 32];
                sharePbns[w] = new long[count];
                shareNew[w] = new boolean[count];
            }
        }
        for (int i = 0; i < count; i++) {
            int w = workerOf(fps, i, n);
            int j = shareCount[w]++;
            shareIndex[w][j] = i;
            System.arraycopy(fps, i * 32, shareFps[w], j * 32, 32);
        }
    }

    @Override
    public void lookup(byte[] fps, int count, long[] pbns) {
        SungemDedupStream.check(closed(), fps, count, pbns);
        long t0 = System.nanoTime();
        split(fps, count);
        lastCount = -1;
        int n = workers.size();
        @SuppressWarnings("unchecked")
        CompletableFuture<SegmentAnswer>[] futures = new CompletableFuture[n];
        for (int w = 0; w < n; w++) {
            if (shareCount[w] > 0) {
                futures[w] = workers.get(w).lookup(new SegmentLookup(id, shareFps[w], shareCount[w]));
            }
        }
        long found = 0;
        for (int w = 0; w < n; w++) {
            if (futures[w] == null) {
                continue;
            }
            SegmentAnswer a = futures[w].join();
            idx.noteLoad(a.load());
            for (int j = 0; j < shareCount[w]; j++) {
                long p = a.pbns()[j];
                pbns[shareIndex[w][j]] = p;
                if (p > 0) {
                    found++;
                }
            }
        }
        if (lastOwners.length < count) {
            lastOwners = new int[count];
        }
        for (int w = 0; w < n; w++) {
            for (int j = 0; j < shareCount[w]; j++) {
                lastOwners[shareIndex[w][j]] = w;
            }
        }
        lastCount = count;
        idx.lookupEntriesSent.add(count);
        idx.lookups.add(count);
        idx.hits.add(found);
        idx.busyNanos.add(System.nanoTime() - t0);
    }

    /** Naive mode: every entry's hash owner, the worker that looked it up and stores it, by member id. */
    @Override
    public void storingWorkers(int count, long[] into) {
        ClusterDedupStream.checkLastLookup(lastCount, count, into);
        long[] ids = idx.memberIds;
        for (int i = 0; i < count; i++) {
            into[i] = ids[lastOwners[i]];
        }
    }

    @Override
    public void record(byte[] fps, int count, long[] pbns, boolean[] isNew) {
        record(fps, count, pbns, isNew, null);
    }

    /**
     * With {@code storers}: an entry whose storing worker is not its hash owner here (looked up on a
     * stream over other workers) is recorded nowhere, so no index learns a PBN of another's range.
     */
    @Override
    public void record(byte[] fps, int count, long[] pbns, boolean[] isNew, long[] storers) {
        SungemDedupStream.check(closed(), fps, count, pbns, isNew);
        if (storers != null) {
            SungemDedupStream.checkWorkers(count, storers);
        }
        long t0 = System.nanoTime();
        split(fps, count);
        int n = workers.size();
        CompletableFuture<?>[] futures = new CompletableFuture<?>[n];
        for (int w = 0; w < n; w++) {
            int c = shareCount[w];
            if (c == 0) {
                continue;
            }
            int placed = 0;
            long member = idx.memberIds[w];
            for (int j = 0; j < c; j++) {
                int i = shareIndex[w][j];
                boolean stored = storers == null || storers[i] == member;
                sharePbns[w][j] = stored ? pbns[i] : 0;
                shareNew[w][j] = stored && isNew[i];
                if (shareNew[w][j]) {
                    placed++;
                }
            }
            futures[w] = workers.get(w).record(new SegmentRecord(id, shareFps[w], c, sharePbns[w], shareNew[w], placed));
        }
        for (CompletableFuture<?> f : futures) {
            if (f != null) {
                f.join();
            }
        }
        idx.recordEntriesSent.add(count);
        idx.recorded.add(count);
        idx.busyNanos.add(System.nanoTime() - t0);
    }
}
