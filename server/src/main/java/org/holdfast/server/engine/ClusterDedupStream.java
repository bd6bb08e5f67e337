package org.holdfast.server.engine;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * One backup session on the master in {@link ClusterMode#NEAREST} mode (thesis 7.2.1-7.2.3).
 *
 * <p><b>Lookup.</b> With {@link ClusterBroadcast#FULL} the call's entries go to every worker at once.
 * With {@link ClusterBroadcast#TWO_PHASE} a probe of its sampled entries (about a quarter) goes to
 * every worker first, and the entries only to the workers that name a candidate container or
 * resolved part of the stream's latest lookups: a worker without candidates would search no
 * container (its SFI names none; its recent containers hold none of the samples), so skipping it
 * costs no duplicate the SFI would find, and never invents one: every PBN is still a worker's exact
 * match in its own containers. Each worker asked answers per entry a PBN (or
 * a miss) and the length of the run that resolved it. Merging left to right, an unresolved entry
 * takes the worker with the longest run from it and the whole of that run, as the standalone
 * engine picks the longest run among containers; a worker's run cut short by another's is counted
 * ({@link ClusterFingerprintIndex#splitRuns}).
 *
 * <p><b>Record.</b> An entry a worker resolved goes back to that worker, which verifies and learns
 * its run (where the session stored a new copy instead, the worker's verification fails and it
 * stores the copy beside the run, as the standalone engine does). Every other entry with a PBN (a
 * miss now stored) is placed: each stretch between resolved entries of
 * an input segment goes to the worker of the resolved entry just before it (the standalone engine
 * appends misses beside their predecessor), else just after it; a segment with nothing resolved goes
 * to the stream's home worker, the least loaded when picked and kept for half a container of such
 * fingerprints so that new data stays together as in the standalone default container. Each worker
 * then gets one record request: the entries it holds with their PBNs, the others as 0.
 *
 * <p>Which worker resolved each entry is kept until the record ({@link SavedMerges}): a record
 * without its merge must broadcast the lookup again (with the 32 lookups the standalone engine
 * keeps, 28 to 46 % of the workers' lookups on the bench's workloads were such repeats).
 * Allocation: the answers of the workers and the saved merge (arrays per call, not per block) and
 * work arrays that grow with the largest call.
 */
final class ClusterDedupStream extends MasterDedupStream {
    /** Per lookup not yet recorded, per entry the worker whose answer was kept (-1: a miss). */
    private final SavedMerges saved = new SavedMerges();
    private byte[] relookup = new byte[0];
    private final long[][] workerPbns;
    private final boolean[][] workerNew;
    private final int[] placed;
    private final boolean[] involved;
    private final CompletableFuture<?>[] pending;
    /** Two-phase broadcast: which workers get the whole lookup, and the sampled entries the probe shows. */
    private final boolean[] ask;
    private long[] samples = new long[0];
    /** Per worker the number of this stream's lookup in which it last resolved an entry. */
    private final long[] lastResolved;
    private long lookupNo;
    private long[] scratch = new long[0];
    private int[] target = new int[0];
    private int home = -1;
    private int homeLeft;

    ClusterDedupStream(ClusterFingerprintIndex idx, long id) {
        super(idx, id);
        int n = workers.size();
        workerPbns = new long[n][0];
        workerNew = new boolean[n][0];
        placed = new int[n];
        involved = new boolean[n];
        pending = new CompletableFuture<?>[n];
        ask = new boolean[n];
        lastResolved = new long[n];
        Arrays.fill(lastResolved, Long.MIN_VALUE / 2);
    }

    @Override
    public void lookup(byte[] fps, int count, long[] pbns) {
        SungemDedupStream.check(closed(), fps, count, pbns);
        long t0 = System.nanoTime();
        long key = SungemDedupStream.keyOf(fps, count);
        byte[] owner = saved.add(key, count);
        long found = lookupInto(owner, key, fps, count, pbns);
        idx.lookups.add(count);
        idx.hits.add(found);
        idx.busyNanos.add(System.nanoTime() - t0);
    }

    /**
     * Sends the entries to the workers {@link #choose} picks, merges the answers into {@code owner}
     * and {@code pbns}; returns how many were resolved. A worker not asked answers nothing: all miss.
     */
    private long lookupInto(byte[] owner, long key, byte[] fps, int count, long[] pbns) {
        choose(key, fps, count);
        SegmentLookup request = new SegmentLookup(id, fps, count);
        int n = workers.size();
        @SuppressWarnings("unchecked")
        CompletableFuture<SegmentAnswer>[] futures = new CompletableFuture[n];
        int asked = 0;
        for (int w = 0; w < n; w++) {
            if (ask[w]) {
                futures[w] = workers.get(w).lookup(request);
                asked++;
            }
        }
        idx.lookupEntriesSent.add((long) count * asked);
        idx.lookupsSpared.add(n - asked);
        SegmentAnswer[] answers = new SegmentAnswer[n];
        for (int w = 0; w < n; w++) {
            if (futures[w] != null) {
                answers[w] = futures[w].join();
                idx.noteLoad(answers[w].load());
            }
        }
        long found = 0;
        int split = 0;
        int i = 0;
        while (i < count) {
            int best = -1;
            int bestLen = 0;
            for (int w = 0; w < n; w++) {
                if (answers[w] == null) {
                    continue;
                }
                int len = answers[w].runs()[i];
                if (len > bestLen && answers[w].pbns()[i] > 0) {
                    best = w;
                    bestLen = len;
                }
            }
            if (best < 0) {
                pbns[i] = 0;
                owner[i] = -1;
                i++;
                continue;
            }
            int[] runs = answers[best].runs();
            if (i > 0 && runs[i - 1] == bestLen + 1 && owner[i - 1] != best) {
                split += bestLen;
            }
            long[] p = answers[best].pbns();
            for (int j = i; j < i + bestLen; j++) {
                pbns[j] = p[j];
                owner[j] = (byte) best;
            }
            found += bestLen;
            i += bestLen;
            lastResolved[best] = lookupNo;
        }
        idx.splitRuns.add(split);
        return found;
    }

    /**
     * Fills {@link #ask}: with a full broadcast (or one worker) every worker; with a two-phase one,
     * after a probe of the lookup's sampled entries to every worker, those with a candidate container
     * and those that resolved an entry in one of the stream's last {@link ClusterFingerprintIndex#AFFINITY}
     * lookups (their recent containers may hold the neighbours of what they found, as the standalone
     * engine's recent containers do).
     */
    private void choose(long key, byte[] fps, int count) {
        lookupNo++;
        int n = workers.size();
        if (idx.broadcast == ClusterBroadcast.FULL || n == 1) {
            Arrays.fill(ask, true);
            return;
        }
        if (samples.length < count) {
            samples = new long[count];
        }
        int m = sample(fps, count, samples);
        SegmentProbe probe = new SegmentProbe(id, key, count, samples, m);
        @SuppressWarnings("unchecked")
        CompletableFuture<ProbeAnswer>[] futures = new CompletableFuture[n];
        for (int w = 0; w < n; w++) {
            futures[w] = workers.get(w).probe(probe);
        }
        idx.probeEntriesSent.add((long) m * n);
        idx.probesSent.add(n);
        for (int w = 0; w < n; w++) {
            ProbeAnswer a = futures[w].join();
            idx.noteLoad(a.load());
            ask[w] = a.candidates() > 0 || lookupNo - lastResolved[w] <= ClusterFingerprintIndex.AFFINITY;
        }
    }

    /**
     * Puts the first words of the entries a probe shows into {@code into} (at least {@code count}
     * long): those at SFI probe level, topped up to {@link SegmentProbe#MIN_SAMPLES}; answers how many.
     */
    static int sample(byte[] fps, int count, long[] into) {
        int m = 0;
        int topUp = Math.min(count, SegmentProbe.MIN_SAMPLES);
        for (int i = 0; i < count; i++) {
            long w0 = FingerprintWords.word(fps, i, 0);
            if (Long.numberOfLeadingZeros(w0) >= SampledFingerprintIndex.MIN_PROBE_LEVEL) {
                into[m++] = w0;
            }
        }
        for (int i = 0; i < count && m < topUp; i++) {
            long w0 = FingerprintWords.word(fps, i, 0);
            if (Long.numberOfLeadingZeros(w0) < SampledFingerprintIndex.MIN_PROBE_LEVEL) {
                into[m++] = w0;
            }
        }
        return m;
    }

    @Override
    public void record(byte[] fps, int count, long[] pbns, boolean[] isNew) {
        SungemDedupStream.check(closed(), fps, count, pbns, isNew);
        long t0 = System.nanoTime();
        long key = SungemDedupStream.keyOf(fps, count);
        byte[] owner = saved.take(key, count);
        if (owner == null) {
            // Not looked up recently: ask the workers again (not a lookup of the caller's).
            if (scratch.length < count) {
                scratch = new long[count];
                relookup = new byte[count];
            }
            owner = relookup;
            lookupInto(owner, key, fps, count, scratch);
        }
        route(owner, count, pbns);
        send(fps, count, pbns, isNew);
        idx.recorded.add(count);
        idx.busyNanos.add(System.nanoTime() - t0);
    }

    /** Decides per entry the worker that holds it: {@code target[i]}, -1 for entries without a PBN. */
    private void route(byte[] owner, int count, long[] pbns) {
        if (target.length < count) {
            target = new int[count];
        }
        Arrays.fill(placed, 0);
        for (int i = 0; i < count; i++) {
            target[i] = owner[i] >= 0 && pbns[i] > 0 ? owner[i] : -1;
        }
        // target >= 0 now marks the entries a worker resolved (the anchors); place the rest
        for (int s = 0; s < count; ) {
            int e = idx.segmenter.end(s, count);
            routeSegment(s, e, pbns);
            s = e;
        }
    }

    private void routeSegment(int s, int e, long[] pbns) {
        boolean anchored = false;
        for (int i = s; i < e && !anchored; i++) {
            anchored = target[i] >= 0;
        }
        if (!anchored) {
            int toPlace = 0;
            for (int i = s; i < e; i++) {
                if (pbns[i] > 0) {
                    toPlace++;
                }
            }
            if (toPlace == 0) {
                return;
            }
            if (home < 0 || homeLeft <= 0) {
                home = idx.leastLoaded();
                homeLeft = idx.homeBudget;
            }
            homeLeft -= toPlace;
            placed[home] += toPlace;
            for (int i = s; i < e; i++) {
                if (pbns[i] > 0) {
                    target[i] = home;
                }
            }
            idx.routedHome.add(toPlace);
            return;
        }
        int i = s;
        while (i < e) {
            if (target[i] >= 0) {
                i++;
                continue;
            }
            int a = i;
            while (i < e && target[i] < 0) {
                i++;
            }
            // [a, i) holds no anchor; a > s or i < e since the segment has one
            int to = a > s ? target[a - 1] : target[i];
            int n = 0;
            for (int j = a; j < i; j++) {
                if (pbns[j] > 0) {
                    target[j] = to;
                    n++;
                }
            }
            placed[to] += n;
            idx.routedNearest.add(n);
        }
    }

    /** One record request per worker holding any entry: its entries' PBNs, 0 for the others. */
    private void send(byte[] fps, int count, long[] pbns, boolean[] isNew) {
        int n = workers.size();
        for (int w = 0; w < n; w++) {
            if (workerPbns[w].length < count) {
                workerPbns[w] = new long[count];
                workerNew[w] = new boolean[count];
            }
            Arrays.fill(workerPbns[w], 0, count, 0L);
            Arrays.fill(workerNew[w], 0, count, false);
            involved[w] = false;
        }
        for (int i = 0; i < count; i++) {
            int w = target[i];
            if (w >= 0) {
                workerPbns[w][i] = pbns[i];
                workerNew[w][i] = isNew[i];
                involved[w] = true;
            }
        }
        for (int w = 0; w < n; w++) {
            if (involved[w]) {
                pending[w] = workers.get(w).record(new SegmentRecord(id, fps, count, workerPbns[w], workerNew[w], placed[w]));
                idx.recordEntriesSent.add(count);
            }
        }
        for (int w = 0; w < n; w++) {
            if (pending[w] != null) {
                CompletableFuture<?> f = pending[w];
                pending[w] = null;
                f.join();
            }
        }
    }
}
