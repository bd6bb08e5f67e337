package org.holdfast.server.engine;

import java.util.Arrays;
import org.holdfast.server.container.Container;
import org.holdfast.server.container.ContainerStore;

/**
 * One backup session's pass through the Sungem engine: segment matching (thesis 5.4) on
 * {@link #lookup}, learning and placement by relatedness (5.4.2, 5.4.3) on {@link #record}.
 *
 * <p><b>Matching.</b> For each input segment, the SFI names the containers holding its sample
 * fingerprints; the stream adds its default container and the few containers of its latest matches
 * (thesis 7.2.1's pseudo-hits: neighbours of earlier hits live there). Then, left to right, an
 * unresolved fingerprint is looked up in the FI of each of those containers and, where found, the
 * match is extended over the following offsets while the fingerprints stay equal; the longest run
 * wins and covers its fingerprints. Runs may cross stored-segment boundaries (offsets of one
 * container that follow each other were stored together); {@link #record} then sees whether a run
 * was an exact match of a stored segment, a tiling of adjacent ones (merge), or a partial match.
 *
 * <p><b>Placement.</b> Fingerprints no container resolved form a new stored segment, appended to the
 * container of the run just before them in the same input segment (its predecessor), or, for the
 * first run of an input segment or when that container is full or contended, to the stream's
 * default container. The default container is replaced once it is half full, leaving room for
 * related segments to join it later.
 *
 * <p>{@link #record} reuses the matches of one of the last 32 lookups of the same fingerprints;
 * otherwise it looks them up again. A run is trusted only where the recorded PBNs equal the
 * container's.
 *
 * <p>Hot path: no allocation per fingerprint; work arrays grow with the largest run seen.
 */
final class SungemDedupStream implements DedupStream {
    private static final int MAX_CANDIDATES = 32;

    private final SungemFingerprintIndex idx;
    private final SungemSettings settings;
    private final int[] recent;
    private int recentCount;
    private int defaultContainer = -1;

    /**
     * The matches of the last {@link #RING} lookups, so that {@link #record} can reuse them when the
     * ingest looks up a batch of segments and records them later. Found by a hash of the segment;
     * a collision is harmless because a run is trusted only where the recorded PBNs equal the
     * container's, and a PBN names one content.
     */
    private static final int RING = 32;

    /** Runs found by one lookup. */
    private static final class SavedLookup {
        long key;
        int count = -1;
        int[] runStart = new int[16];
        int[] runLen = new int[16];
        int[] runContainer = new int[16];
        int[] runOffset = new int[16];
        int runCount;
        /** Saved by a {@link #probe} with no candidate (a lookup of the same entries that follows takes it over). */
        boolean probed;
    }

    private final SavedLookup[] ring = new SavedLookup[RING];
    private int ringNext;
    private final SavedLookup relookup = new SavedLookup();
    private SavedLookup cur;
    private int[] runStart;
    private int[] runLen;
    private int[] runContainer;
    private int[] runOffset;
    private int runCount;
    private long[] scratch = new long[0];

    private final int[] candidates = new int[MAX_CANDIDATES];
    private final Container[] held = new Container[MAX_CANDIDATES];
    private final boolean[] useful = new boolean[MAX_CANDIDATES];
    private boolean closed;

    SungemDedupStream(SungemFingerprintIndex idx) {
        this.idx = idx;
        this.settings = idx.settings;
        this.recent = new int[Math.max(1, settings.recentContainers())];
        for (int i = 0; i < RING; i++) {
            ring[i] = new SavedLookup();
        }
    }

    /** A hash of a segment's fingerprints (two words each) and length (also the cluster streams' key of a saved lookup). */
    static long keyOf(byte[] fps, int count) {
        long h = count * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < count; i++) {
            h = (h ^ FingerprintWords.word(fps, i, 0)) * 0xbf58476d1ce4e5b9L;
            h ^= FingerprintWords.word(fps, i, 3) + (h >>> 29);
        }
        return h;
    }

    private void use(SavedLookup slot) {
        cur = slot;
        runStart = slot.runStart;
        runLen = slot.runLen;
        runContainer = slot.runContainer;
        runOffset = slot.runOffset;
        runCount = slot.runCount;
    }

    /** Refuses a lookup on a closed stream, or whose arrays do not hold {@code count} entries (also for the cluster streams). */
    static void check(boolean closed, byte[] fps, int count, long[] pbns) {
        if (closed) {
            throw new IllegalStateException("stream closed");
        }
        if (count < 0 || fps.length < count * 32L || pbns.length < count) {
            throw new IllegalArgumentException("segment of " + count + " entries does not fit the arrays ("
                    + fps.length + " fingerprint bytes, " + pbns.length + " PBNs)");
        }
    }

    /** As {@link #check(boolean, byte[], int, long[])} for a record, whose {@code isNew} must hold the entries too. */
    static void check(boolean closed, byte[] fps, int count, long[] pbns, boolean[] isNew) {
        check(closed, fps, count, pbns);
        if (isNew.length < count) {
            throw new IllegalArgumentException("isNew has " + isNew.length + " entries, need " + count);
        }
    }

    /**
     * A standalone node stores every block itself: {@link DedupStream#NO_WORKER} for each entry (also
     * for {@link ExactFingerprintIndex}'s streams).
     */
    @Override
    public void storingWorkers(int count, long[] workers) {
        noWorkers(count, workers);
    }

    /** Fills {@code workers} with {@link DedupStream#NO_WORKER} for {@code count} entries, refusing arrays too short. */
    static void noWorkers(int count, long[] workers) {
        checkWorkers(count, workers);
        Arrays.fill(workers, 0, count, NO_WORKER);
    }

    /** Refuses a negative {@code count} or a {@code workers} array shorter than it (also for the cluster streams). */
    static void checkWorkers(int count, long[] workers) {
        if (count < 0 || workers.length < count) {
            throw new IllegalArgumentException("storing workers of " + count + " entries do not fit an array of " + workers.length);
        }
    }

    @Override
    public void lookup(byte[] fps, int count, long[] pbns) {
        check(closed, fps, count, pbns);
        long t0 = System.nanoTime();
        long key = keyOf(fps, count);
        SavedLookup newest = ring[(ringNext - 1 + RING) % RING];
        SavedLookup slot;
        if (newest.probed && newest.count == count && newest.key == key) {
            // the master asked anyway after this worker's empty probe: one slot for both, or each
            // such lookup would push an older one out of the ring and its record would look it up again
            slot = newest;
        } else {
            slot = ring[ringNext];
            ringNext = (ringNext + 1) % RING;
        }
        idx.lookups.add(count);
        idx.hits.add(lookupInto(slot, key, fps, count, pbns));
        idx.busyNanos.add(System.nanoTime() - t0);
    }

    private long lookupInto(SavedLookup slot, long key, byte[] fps, int count, long[] pbns) {
        idx.bfc.advance();
        use(slot);
        runCount = 0;
        long found = 0;
        for (int s = 0; s < count; ) {
            int e = idx.segmenter.end(s, count);
            found += lookupSegment(fps, s, e, pbns);
            s = e;
        }
        slot.runCount = runCount;
        slot.count = count;
        slot.key = key;
        slot.probed = false;
        return found;
    }

    /**
     * Writes into {@code out[i]} how many entries, from entry i on, the run that resolved entry i of
     * the last {@link #lookup} still covers (0 for a miss). For a cluster worker's answer
     * ({@link LocalDedupWorker}): the master prefers the longest runs when workers disagree. Reads
     * the saved runs; outside the hot path and allocation-free.
     */
    void lastRunLengths(int count, int[] out) {
        SavedLookup last = ring[(ringNext - 1 + RING) % RING];
        Arrays.fill(out, 0, count, 0);
        if (last.count != count) {
            return;
        }
        for (int r = 0; r < last.runCount; r++) {
            int start = last.runStart[r];
            int len = last.runLen[r];
            for (int j = 0; j < len; j++) {
                out[start + j] = len - j;
            }
        }
    }

    /**
     * The first phase of a cluster worker's two-phase lookup ({@link ClusterBroadcast#TWO_PHASE}): how
     * many candidate containers a lookup of {@code count} entries would search here, judged from the
     * first words of {@code n} of them: the SFI's containers for the words at probe level, else the
     * stream's default and recent containers holding a fingerprint that begins with one of the words,
     * among those in memory: loading one here would add container I/O a full broadcast does not
     * have (the master also sends the whole lookup to the workers that resolved part of the stream's
     * latest lookups, whose recent containers matter most). With the exact fallback on, any lookup
     * may find something, so the answer is then never 0. On 0 the lookup is saved under {@code key}
     * as one that resolved nothing, so that a {@link #record} of its entries (misses the master
     * routes here) stores them without looking them up again.
     */
    int probe(long[] words, int n, long key, int count) {
        if (closed) {
            throw new IllegalStateException("stream closed");
        }
        if (n < 0 || words.length < n) {
            throw new IllegalArgumentException(n + " samples do not fit " + words.length + " words");
        }
        long t0 = System.nanoTime();
        int found = 0;
        idx.sfiLock.readLock().lock();
        try {
            SampledFingerprintIndex sfi = idx.sfi;
            for (int i = 0; i < n; i++) {
                long w0 = words[i];
                if (Long.numberOfLeadingZeros(w0) >= SampledFingerprintIndex.MIN_PROBE_LEVEL) {
                    int r = sfi.probe(w0, candidates, found);
                    found = r >= SampledFingerprintIndex.HIT ? r - SampledFingerprintIndex.HIT : r;
                }
            }
        } finally {
            idx.sfiLock.readLock().unlock();
        }
        if (found == 0) {
            found = recentHolding(words, n);
        }
        if (found == 0 && idx.fallback != null) {
            found = 1;
        }
        if (found == 0) {
            SavedLookup slot = ring[ringNext];
            ringNext = (ringNext + 1) % RING;
            slot.runCount = 0;
            slot.count = count;
            slot.key = key;
            slot.probed = true;
        }
        idx.busyNanos.add(System.nanoTime() - t0);
        return found;
    }

    /** How many of the stream's default and recent containers in memory hold a fingerprint beginning with one of {@code n} words. */
    private int recentHolding(long[] words, int n) {
        int holding = 0;
        for (int j = -1; j < recentCount; j++) {
            int id = j < 0 ? defaultContainer : recent[j];
            if (id <= 0 || (j >= 0 && id == defaultContainer)) {
                continue;
            }
            Container c = idx.store.acquireIfCached(id); // a probe loads nothing: see probe()
            if (c == null) {
                continue;
            }
            c.lock().readLock().lock();
            try {
                for (int i = 0; i < n; i++) {
                    if (c.holdsWord(words[i])) {
                        holding++;
                        break;
                    }
                }
            } finally {
                c.lock().readLock().unlock();
                idx.store.release(c);
            }
        }
        return holding;
    }

    /** Looks up input segment {@code [s, e)}; returns how many fingerprints it resolved. */
    private long lookupSegment(byte[] fps, int s, int e, long[] pbns) {
        int n = 0;
        int sampleHits = 0;
        idx.sfiLock.readLock().lock();
        try {
            SampledFingerprintIndex sfi = idx.sfi;
            for (int i = s; i < e; i++) {
                long w0 = FingerprintWords.word(fps, i, 0);
                if (Long.numberOfLeadingZeros(w0) >= SampledFingerprintIndex.MIN_PROBE_LEVEL) {
                    int r = sfi.probe(w0, candidates, n);
                    if (r >= SampledFingerprintIndex.HIT) {
                        sampleHits++;
                        r -= SampledFingerprintIndex.HIT;
                    }
                    n = r;
                }
            }
        } finally {
            idx.sfiLock.readLock().unlock();
        }
        idx.sfiHits.add(sampleHits);
        n = addCandidate(defaultContainer, n);
        for (int j = 0; j < recentCount; j++) {
            n = addCandidate(recent[j], n);
        }
        int h = 0;
        for (int j = 0; j < n; j++) {
            Container c = idx.store.acquire(candidates[j]);
            if (c != null) {
                c.lock().readLock().lock();
                useful[h] = false;
                held[h++] = c;
            }
        }
        long found = 0;
        boolean checkStale = !idx.stale.isEmpty();
        try {
            int i = s;
            while (i < e) {
                int best = 0;
                int bestHeld = -1;
                int bestOff = -1;
                for (int j = 0; j < h; j++) {
                    Container c = held[j];
                    int o = c.find(fps, i);
                    if (o >= 0) {
                        int len = c.extend(fps, i, e, o);
                        if (len > best) {
                            best = len;
                            bestHeld = j;
                            bestOff = o;
                            if (len == e - i) {
                                break;
                            }
                        }
                    }
                }
                if (best > 0) {
                    Container c = held[bestHeld];
                    for (int j = 0; j < best; j++) {
                        long p = c.pbn(bestOff + j);
                        if (checkStale && idx.stale.contains(p)) {
                            idx.stalePbnsDropped.increment();
                            best = j;
                            break;
                        }
                        pbns[i + j] = p;
                    }
                }
                if (best > 0) {
                    useful[bestHeld] = true;
                    addRun(i, best, held[bestHeld].id(), bestOff);
                    found += best;
                    i += best;
                } else {
                    pbns[i] = 0;
                    i++;
                }
            }
        } finally {
            for (int j = 0; j < h; j++) {
                held[j].lock().readLock().unlock();
                idx.store.release(held[j]);
            }
        }
        int usefulCount = 0;
        for (int j = h - 1; j >= 0; j--) {
            if (useful[j]) {
                usefulCount++;
                remember(held[j].id());
            }
            held[j] = null;
        }
        idx.containersTouched.add(h);
        idx.containersUseful.add(usefulCount);
        if (idx.fallback != null && found < e - s) {
            found += lookupFallback(fps, s, e, pbns, checkStale);
        }
        return found;
    }

    /** Bloom-guided fallback: misses the chain has seen are looked up in the exact on-disk map. */
    private long lookupFallback(byte[] fps, int s, int e, long[] pbns, boolean checkStale) {
        long found = 0;
        for (int i = s; i < e; i++) {
            if (pbns[i] == 0 && idx.bfc.mightContain(fps, i)) {
                idx.fallbackProbes.increment();
                long p = idx.fallback.get(fps, i);
                if (p > 0 && !(checkStale && idx.stale.contains(p))) {
                    pbns[i] = p;
                    found++;
                    idx.fallbackHits.increment();
                }
            }
        }
        return found;
    }

    private int addCandidate(int id, int n) {
        if (id <= 0 || n >= candidates.length) {
            return n;
        }
        for (int j = 0; j < n; j++) {
            if (candidates[j] == id) {
                return n;
            }
        }
        candidates[n] = id;
        return n + 1;
    }

    /** Moves container {@code id} to the front of the stream's recent list. */
    private void remember(int id) {
        if (recent.length == 0 || settings.recentContainers() == 0) {
            return;
        }
        int at = -1;
        for (int j = 0; j < recentCount; j++) {
            if (recent[j] == id) {
                at = j;
                break;
            }
        }
        if (at < 0) {
            at = Math.min(recentCount, recent.length - 1);
            if (recentCount < recent.length) {
                recentCount++;
            }
        }
        System.arraycopy(recent, 0, recent, 1, at);
        recent[0] = id;
    }

    private void addRun(int start, int len, int container, int offset) {
        if (runCount == runStart.length) {
            int n = runCount * 2;
            runStart = cur.runStart = Arrays.copyOf(runStart, n);
            runLen = cur.runLen = Arrays.copyOf(runLen, n);
            runContainer = cur.runContainer = Arrays.copyOf(runContainer, n);
            runOffset = cur.runOffset = Arrays.copyOf(runOffset, n);
        }
        runStart[runCount] = start;
        runLen[runCount] = len;
        runContainer[runCount] = container;
        runOffset[runCount] = offset;
        runCount++;
    }

    @Override
    public void record(byte[] fps, int count, long[] pbns, boolean[] isNew) {
        check(closed, fps, count, pbns, isNew);
        long t0 = System.nanoTime();
        long key = keyOf(fps, count);
        SavedLookup slot = null;
        for (int j = 1; j <= RING && slot == null; j++) {
            SavedLookup c = ring[(ringNext - j + RING) % RING]; // newest first
            if (c.count == count && c.key == key) {
                slot = c;
            }
        }
        if (slot != null) {
            use(slot);
            slot.count = -1; // used up
        } else {
            // Not looked up recently (or pushed out of the ring): find the matches again. Not a
            // lookup of the caller's, so the counters stay out of it.
            if (scratch.length < count) {
                scratch = new long[count];
            }
            lookupInto(relookup, key, fps, count, scratch);
            relookup.count = -1;
        }
        idx.bfc.advance();
        int r = 0;
        for (int s = 0; s < count; ) {
            int e = idx.segmenter.end(s, count);
            r = recordSegment(fps, s, e, pbns, r);
            s = e;
        }
        idx.bfc.addAll(fps, 0, count);
        if (idx.fallback != null) {
            idx.fallback.putNew(fps, count, pbns, isNew);
        }
        idx.recorded.add(count);
        idx.busyNanos.add(System.nanoTime() - t0);
    }

    private int recordSegment(byte[] fps, int s, int e, long[] pbns, int r) {
        int pred = -1;
        int i = s;
        while (i < e) {
            if (r < runCount && runStart[r] == i) {
                int len = runLen[r];
                int cid = runContainer[r];
                int off = runOffset[r];
                r++;
                int verified = 0;
                Container c = idx.store.acquire(cid);
                if (c != null) {
                    try {
                        if (ContainerStore.tryWrite(c, idx.lockTimeoutNanos)) {
                            try {
                                verified = verify(c, off, pbns, i, len);
                                if (verified > 0) {
                                    learnMatch(c, off, verified);
                                }
                            } finally {
                                c.lock().writeLock().unlock();
                            }
                            pred = cid;
                        } else {
                            // Contended: use the container read-only; new segments go elsewhere.
                            idx.readOnlyFallbacks.increment();
                            pred = -1;
                        }
                    } finally {
                        idx.store.release(c);
                    }
                }
                if (verified < len) {
                    pred = placeGap(fps, i + verified, i + len, pbns, verified > 0 ? pred : -1);
                }
                i += len;
            } else {
                int gapEnd = r < runCount ? Math.min(runStart[r], e) : e;
                pred = placeGap(fps, i, gapEnd, pbns, pred);
                i = gapEnd;
            }
        }
        return r;
    }

    /** Leading entries of a run whose recorded PBN still equals the container's. */
    private static int verify(Container c, int off, long[] pbns, int i, int len) {
        int n = 0;
        while (n < len && off + n < c.count() && c.pbn(off + n) != 0 && c.pbn(off + n) == pbns[i + n]) {
            n++;
        }
        return n;
    }

    /** Learns from a verified run of {@code len} at {@code off} of {@code c}; caller holds its write lock. */
    private void learnMatch(Container c, int off, int len) {
        long stamp = idx.nextStamp();
        int seg = c.exactSegment(off, off + len);
        if (seg >= 0) {
            idx.exactMatches.increment();
            int matches = c.countExactMatch(seg, stamp);
            boolean stabilize = matches >= settings.tBsu() && !c.isStable(seg);
            if (stabilize) {
                c.setStable(seg);
            }
            refreshRecord(c, seg, stabilize);
            return;
        }
        int merged = c.mergeTiling(off, off + len, settings.uSegment(), stamp);
        if (merged >= 0) {
            idx.merges.increment();
            refreshRecord(c, merged, false);
            return;
        }
        c.touchRange(off, off + len, stamp);
        if (len >= settings.tSummary()) {
            int sub = c.addSubSegment(off, off + len, stamp);
            idx.subSegments.increment();
            addSamples(c, sub, false);
        }
    }

    /** Moves the segment's SFI record to the LRU head (re-adding samples if it had lost them). */
    private void refreshRecord(Container c, int seg, boolean stabilize) {
        if (c.segmentEnd(seg) - c.segmentStart(seg) < settings.tSummary()) {
            return;
        }
        long anchorKey = c.key(c.anchorOffset(seg));
        idx.sfiLock.writeLock().lock();
        try {
            int rec = idx.sfi.findRecord(anchorKey, c.id(), seg);
            if (rec >= 0) {
                idx.sfi.touch(rec);
                if (stabilize) {
                    idx.sfi.stabilize(rec, settings.stableLevels());
                }
            } else {
                idx.sfi.addSegment(c, seg, c.segmentStart(seg), c.segmentEnd(seg), idx.initialLevel, c.isStable(seg));
            }
        } finally {
            idx.sfiLock.writeLock().unlock();
        }
    }

    private void addSamples(Container c, int seg, boolean stable) {
        if (c.segmentEnd(seg) - c.segmentStart(seg) < settings.tSummary()) {
            return;
        }
        idx.sfiLock.writeLock().lock();
        try {
            idx.sfi.addSegment(c, seg, c.segmentStart(seg), c.segmentEnd(seg), idx.initialLevel, stable);
        } finally {
            idx.sfiLock.writeLock().unlock();
        }
    }

    /**
     * Stores the unresolved fingerprints {@code [a, b)} as new stored segments beside
     * {@code pred}'s container if it has room and is free, else in the default container; entries
     * without a PBN (zero blocks) are skipped. Returns the container used last.
     */
    private int placeGap(byte[] fps, int a, int b, long[] pbns, int pred) {
        int i = a;
        int last = pred;
        while (i < b) {
            while (i < b && pbns[i] <= 0) {
                i++;
            }
            int j = i;
            while (j < b && pbns[j] > 0) {
                j++;
            }
            if (j > i) {
                last = append(fps, i, j - i, pbns, last);
            }
            i = j;
        }
        return last;
    }

    private int append(byte[] fps, int from, int len, long[] pbns, int pred) {
        if (pred > 0) {
            Container c = idx.store.acquire(pred);
            if (c != null) {
                try {
                    if (c.hasRoom(len) && ContainerStore.tryWrite(c, idx.lockTimeoutNanos)) {
                        try {
                            if (c.hasRoom(len)) {
                                appendTo(c, fps, from, len, pbns);
                                return pred;
                            }
                        } finally {
                            c.lock().writeLock().unlock();
                        }
                    }
                } finally {
                    idx.store.release(c);
                }
            }
        }
        for (int attempt = 0; attempt < 3; attempt++) {
            Container c = defaultContainer > 0 ? idx.store.acquire(defaultContainer) : null;
            if (c == null || c.count() >= settings.uContainer() / 2 || !c.hasRoom(len)) {
                if (c != null) {
                    idx.store.release(c);
                }
                c = idx.store.create();
                defaultContainer = c.id();
            }
            try {
                if (ContainerStore.tryWrite(c, idx.lockTimeoutNanos)) {
                    try {
                        if (c.hasRoom(len)) {
                            appendTo(c, fps, from, len, pbns);
                            return c.id();
                        }
                    } finally {
                        c.lock().writeLock().unlock();
                    }
                } else {
                    idx.readOnlyFallbacks.increment();
                }
                defaultContainer = -1;
            } finally {
                idx.store.release(c);
            }
        }
        throw new IllegalStateException("no container accepted " + len + " fingerprints");
    }

    private void appendTo(Container c, byte[] fps, int from, int len, long[] pbns) {
        int seg = c.appendSegment(fps, from, len, pbns, idx.nextStamp());
        idx.newSegments.increment();
        addSamples(c, seg, false);
        remember(c.id());
    }

    @Override
    public void close() {
        closed = true;
    }
}
