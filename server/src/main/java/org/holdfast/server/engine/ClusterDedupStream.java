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
 * <p><b>Placement, at lookup</b> (so that the master knows the storing worker of every miss before
 * its block arrives: {@link #storingWorkers}). Right after the merge, every entry gets the worker
 * that stores it if the session stores it. A resolved entry: the worker that resolved it (it holds
 * the container; where the session stores a new copy after all, because the reference guard refused
 * the match, the block is bad or an unproven candidate's payload differed, that worker's
 * verification fails and it stores the copy beside the run, as the standalone engine does). A miss:
 * each stretch of misses between resolved entries of an input segment goes to the worker of the
 * resolved entry just before it (the standalone engine appends misses beside their predecessor),
 * else just after it; a segment with nothing resolved goes to the stream's home worker, the least
 * loaded when picked and kept for half a container of such misses (the home budget, charged here)
 * so that new data stays together as in the standalone default container.
 *
 * <p><b>Record.</b> Each entry with a PBN goes to the worker placed for it at lookup: one record
 * request per worker, the entries it holds with their PBNs, the others as 0; a miss counts as placed
 * on its worker (its load). For the ingest, which records only segments whose entries all have a
 * PBN, this sends every worker the entries the placement at record sent it before routing moved to
 * the lookup, with the same home budget charges in the same order.
 *
 * <p>The merge and the placement are kept until the record ({@link SavedMerges}). A record without
 * them (dropped past the bound, or a stream that never looked the segment up) broadcasts the lookup
 * again and places it again, charging the home budget again; its storing workers can differ from
 * those the lookup announced if a worker's containers changed or the home moved on in between (with
 * the 32 lookups the standalone engine keeps, 28 to 46 % of the workers' lookups on the bench's
 * workloads were such repeats). So a session that sent blocks to their storing workers hands them
 * to the record (member ids, {@link DedupStream#record(byte[], int, long[], boolean[], long[])}):
 * each entry then goes to the worker that stores it, never placed again, and one whose worker is
 * none of this stream's is recorded nowhere. Allocation: the answers of the workers and the saved
 * merge (arrays per call, not per block) and work arrays that grow with the largest call.
 */
final class ClusterDedupStream extends MasterDedupStream {
    /** Per lookup not yet recorded, per entry the worker whose answer was kept and the storing worker. */
    private final SavedMerges saved = new SavedMerges();
    /** The last completed lookup's merge, for {@link #storingWorkers}; null before any. */
    private SavedMerges.Merge last;
    /** A record's second lookup (its merge was not kept): grown with the largest such call. */
    private byte[] relookupResolver = new byte[0];
    private byte[] relookupStorer = new byte[0];
    /** A record's storing workers as the caller gave them, by worker number: grown with the largest such call. */
    private byte[] given = new byte[0];
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
        SavedMerges.Merge m = new SavedMerges.Merge(count);
        last = null;
        long found = lookupInto(m.resolver, key, fps, count, pbns);
        place(m.resolver, m.storer, count);
        // kept only once complete: a lookup that fails half way leaves nothing for a record to trust
        saved.keep(key, m);
        last = m;
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
        record(fps, count, pbns, isNew, null);
    }

    /**
     * With {@code storers} (member ids, see {@link DedupStream#record(byte[], int, long[], boolean[], long[])})
     * each entry goes to the worker the caller stored it on, not to the one a second placement would
     * pick; an id that is none of this stream's workers records the entry nowhere. Null: the saved
     * placement, or a new one.
     */
    @Override
    public void record(byte[] fps, int count, long[] pbns, boolean[] isNew, long[] storers) {
        SungemDedupStream.check(closed(), fps, count, pbns, isNew);
        if (storers != null) {
            SungemDedupStream.checkWorkers(count, storers);
        }
        long t0 = System.nanoTime();
        long key = SungemDedupStream.keyOf(fps, count);
        SavedMerges.Merge m = saved.take(key, count);
        byte[] resolver;
        byte[] storer;
        if (m != null) {
            resolver = m.resolver;
            storer = storers == null ? m.storer : numbers(storers, count);
        } else {
            // Not looked up recently: ask the workers again and place again (not a lookup of the caller's).
            if (scratch.length < count) {
                scratch = new long[count];
                relookupResolver = new byte[count];
                relookupStorer = new byte[count];
            }
            resolver = relookupResolver;
            lookupInto(resolver, key, fps, count, scratch);
            if (storers == null) {
                storer = relookupStorer;
                place(resolver, storer, count);
            } else {
                storer = numbers(storers, count);
            }
        }
        route(resolver, storer, count, pbns);
        send(fps, count, pbns, isNew);
        idx.recorded.add(count);
        idx.busyNanos.add(System.nanoTime() - t0);
    }

    /**
     * This stream's worker numbers of member ids {@code storers[0..count)}, -1 for an id that is none
     * of its workers (or {@link DedupStream#NO_WORKER}), in a work array grown with the largest call.
     */
    private byte[] numbers(long[] storers, int count) {
        if (given.length < count) {
            given = new byte[count];
        }
        long[] ids = idx.memberIds;
        long lastId = NO_WORKER;
        byte lastNo = -1;
        for (int i = 0; i < count; i++) {
            long id = storers[i];
            if (id != lastId) {
                lastId = id;
                lastNo = -1;
                for (int w = 0; w < ids.length; w++) {
                    if (ids[w] == id) {
                        lastNo = (byte) w;
                        break;
                    }
                }
            }
            given[i] = lastNo;
        }
        return given;
    }

    /**
     * The placement: fills {@code storer} from the merge in {@code resolver} (see the class comment),
     * input segment by input segment, charging the home budget and the routing counters.
     */
    private void place(byte[] resolver, byte[] storer, int count) {
        System.arraycopy(resolver, 0, storer, 0, count);
        // storer >= 0 now marks the entries a worker resolved (the anchors); place the misses
        for (int s = 0; s < count; ) {
            int e = idx.segmenter.end(s, count);
            placeSegment(storer, s, e);
            s = e;
        }
    }

    private void placeSegment(byte[] storer, int s, int e) {
        boolean anchored = false;
        for (int i = s; i < e && !anchored; i++) {
            anchored = storer[i] >= 0;
        }
        if (!anchored) {
            if (home < 0 || homeLeft <= 0) {
                home = idx.leastLoaded();
                homeLeft = idx.homeBudget;
            }
            homeLeft -= e - s;
            Arrays.fill(storer, s, e, (byte) home);
            idx.routedHome.add(e - s);
            return;
        }
        int i = s;
        while (i < e) {
            if (storer[i] >= 0) {
                i++;
                continue;
            }
            int a = i;
            while (i < e && storer[i] < 0) {
                i++;
            }
            // [a, i) holds no anchor; a > s or i < e since the segment has one
            byte to = a > s ? storer[a - 1] : storer[i];
            Arrays.fill(storer, a, i, to);
            idx.routedNearest.add(i - a);
        }
    }

    /**
     * Per entry the worker the record sends it to: {@code target[i]}, the storing worker, or -1 for
     * an entry without a PBN or whose storing worker is none of this stream's; {@code placed[w]}: the misses among them stored on worker w.
     */
    private void route(byte[] resolver, byte[] storer, int count, long[] pbns) {
        if (target.length < count) {
            target = new int[count];
        }
        Arrays.fill(placed, 0);
        for (int i = 0; i < count; i++) {
            if (pbns[i] > 0) {
                target[i] = storer[i]; // -1: a storing worker the caller named that is none of this stream's
                if (resolver[i] < 0 && storer[i] >= 0) {
                    placed[storer[i]]++;
                }
            } else {
                target[i] = -1;
            }
        }
    }

    /**
     * The storing workers decided at the last lookup (see {@link DedupStream#storingWorkers}), by
     * member id: the placement's numbers are this stream's index's, fixed for its life, so they map
     * to the workers that answered that lookup whatever registered or dropped since.
     */
    @Override
    public void storingWorkers(int count, long[] into) {
        checkLastLookup(last == null ? -1 : last.count(), count, into);
        byte[] storer = last.storer;
        long[] ids = idx.memberIds;
        for (int i = 0; i < count; i++) {
            into[i] = ids[storer[i]];
        }
    }

    /**
     * Refuses a storing-workers call with no completed lookup ({@code lastCount} -1), for another
     * count than the last lookup's, or into an array too short (also for {@link HashSplitDedupStream}).
     */
    static void checkLastLookup(int lastCount, int count, long[] into) {
        if (lastCount < 0) {
            throw new IllegalStateException("no completed lookup on this stream to answer for (none ran, or the last one failed): storing workers are"
                    + " decided by a lookup");
        }
        if (count != lastCount) {
            throw new IllegalArgumentException("the last lookup had " + lastCount + " entries, not " + count
                    + ": ask for the storing workers right after the lookup they belong to");
        }
        SungemDedupStream.checkWorkers(count, into);
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
