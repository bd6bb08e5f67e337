package org.holdfast.server.container;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongPredicate;

/**
 * One fingerprint container of the Sungem engine (thesis 5.4.3, figure 5.3): related stored
 * segments, their fingerprints and PBNs.
 *
 * <p>Layout. Fingerprints are appended, never moved: an <em>offset</em> names one entry for the
 * container's lifetime. The RFI (offset to fingerprint) is the array {@code words} itself, four
 * big-endian longs per offset; {@code pbns} holds each entry's PBN, 0 marking an entry purged as
 * stale (lazy deletion, thesis 5.7). The FI is an open-addressing table from fingerprint to offset
 * (the newest offset wins for a fingerprint stored twice). A stored segment is a run of consecutive
 * offsets {@code [start, end)}; the SI keeps, per offset, the ids of the at most K stored segments
 * holding it (the thesis uses a tree keyed by offset ranges; K slots per offset answer the same
 * question in one array read). Each segment carries an LRU stamp and its exact-match count. Segment
 * ids are stable for the container's lifetime, on disk too, so the SFI can name a segment.
 *
 * <p>Segments over contiguous offsets make the thesis' split and merge cheap: a partial match of a
 * stored segment forms a new segment over the matched sub-range (the fingerprints stay where they
 * are, now shared by two segments); when a fingerprint would exceed K segments, the least recently
 * used of its segments gives up the overlapping offsets, which splits it into a left and a right
 * part. Adjacent segments matched exactly together are merged into one.
 *
 * <p>Concurrency: readers (lookups) hold {@link #lock()}'s read lock, writers its write lock. A
 * writer that cannot get the lock in time uses the container read-only (thesis 5.8).
 */
public final class Container {
    /** Largest number of fingerprints a container may hold, whatever the setting (on-disk limit). */
    public static final int MAX_FINGERPRINTS = 1 << 20;
    /** Largest K (segments per fingerprint) a container supports. */
    public static final int MAX_K = 16;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final int INITIAL_CAPACITY = 256;
    private static final byte FLAG_STABLE = 1;
    static final int FLAG_DEAD = 2;

    private final int id;
    private final int maxFingerprints;
    private final int k;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private long[] words;
    private long[] pbns;
    private int count;
    private int live;
    private int[] fi;
    private int fiShift;
    private int[] si;

    private int[] segStart;
    private int[] segEnd;
    private int[] segExact;
    private long[] segUse;
    private byte[] segFlags;
    private int segSlots;
    private int liveSegments;
    private int[] freeSegs = new int[16];
    private int freeSegCount;

    private int[] victims = new int[16];

    private long purgedSeq;
    private volatile boolean dirty;
    private volatile long lastAccess;
    private long modifications;

    /** A new, empty container. */
    public Container(int id, int maxFingerprints, int k) {
        this(id, maxFingerprints, k, Math.min(INITIAL_CAPACITY, maxFingerprints), 8);
    }

    Container(int id, int maxFingerprints, int k, int capacity, int segCapacity) {
        if (maxFingerprints < 1 || maxFingerprints > MAX_FINGERPRINTS) {
            throw new IllegalArgumentException("U_container must be within 1.." + MAX_FINGERPRINTS + ": " + maxFingerprints);
        }
        if (k < 1 || k > MAX_K) {
            throw new IllegalArgumentException("K must be within 1.." + MAX_K + ": " + k);
        }
        this.id = id;
        this.maxFingerprints = maxFingerprints;
        this.k = k;
        allocate(Math.max(1, capacity));
        segStart = new int[Math.max(1, segCapacity)];
        segEnd = new int[segStart.length];
        segExact = new int[segStart.length];
        segUse = new long[segStart.length];
        segFlags = new byte[segStart.length];
    }

    private void allocate(int capacity) {
        words = words == null ? new long[capacity * 4] : Arrays.copyOf(words, capacity * 4);
        pbns = pbns == null ? new long[capacity] : Arrays.copyOf(pbns, capacity);
        int oldSi = si == null ? 0 : si.length;
        si = si == null ? new int[capacity * k] : Arrays.copyOf(si, capacity * k);
        Arrays.fill(si, oldSi, si.length, -1);
        int fiSize = Integer.highestOneBit(Math.max(2, capacity * 2 - 1)) << 1;
        fi = new int[fiSize];
        fiShift = 64 - Integer.numberOfTrailingZeros(fiSize);
        for (int off = 0; off < count; off++) {
            if (pbns[off] != 0) {
                fiInsert(off);
            }
        }
    }

    /** This container's id. */
    public int id() {
        return id;
    }

    /** The lock: read for lookups, write for changes. */
    public ReentrantReadWriteLock lock() {
        return lock;
    }

    /** Entries ever appended (offsets {@code 0..count-1}), live or purged. */
    public int count() {
        return count;
    }

    /** Entries not purged. */
    public int live() {
        return live;
    }

    /** Live stored segments. */
    public int segments() {
        return liveSegments;
    }

    /** U_container. */
    public int maxFingerprints() {
        return maxFingerprints;
    }

    /** K. */
    public int k() {
        return k;
    }

    /** True if {@code n} more fingerprints fit. */
    public boolean hasRoom(int n) {
        return count + n <= maxFingerprints;
    }

    /** First word of the fingerprint at {@code off}: its SFI key. */
    public long key(int off) {
        return words[off * 4];
    }

    /** Word {@code w} (0..3) of the fingerprint at {@code off} (the RFI). */
    public long word(int off, int w) {
        return words[off * 4 + w];
    }

    /** The four words of all offsets, offset-major; read-only for callers. */
    long[] wordsArray() {
        return words;
    }

    /** PBN at {@code off}; 0 if the entry was purged. */
    public long pbn(int off) {
        return pbns[off];
    }

    /** Offset of the live entry with this fingerprint, or -1 (FI lookup). */
    public int find(long w0, long w1, long w2, long w3) {
        int[] t = fi;
        int mask = t.length - 1;
        int slot = (int) ((w0 * 0x9E3779B97F4A7C15L) >>> fiShift);
        while (true) {
            int v = t[slot];
            if (v == 0) {
                return -1;
            }
            int off = v - 1;
            int b = off * 4;
            if (words[b] == w0 && words[b + 1] == w1 && words[b + 2] == w2 && words[b + 3] == w3) {
                return pbns[off] != 0 ? off : -1;
            }
            slot = (slot + 1) & mask;
        }
    }

    /**
     * Whether a live entry's fingerprint begins with the 64-bit word {@code w0} (FI lookup by the
     * first word only): a cheap hint for a cluster worker's probe, which sees only first words. The
     * walk of {@link #find(long, long, long, long)}, kept apart so that the hot path stays as it is.
     */
    public boolean holdsWord(long w0) {
        int[] t = fi;
        int mask = t.length - 1;
        int slot = (int) ((w0 * 0x9E3779B97F4A7C15L) >>> fiShift);
        while (true) {
            int v = t[slot];
            if (v == 0) {
                return false;
            }
            int off = v - 1;
            if (words[off * 4] == w0 && pbns[off] != 0) {
                return true;
            }
            slot = (slot + 1) & mask;
        }
    }

    /** FI lookup of the input fingerprint at index {@code i} of packed {@code fps}. */
    public int find(byte[] fps, int i) {
        int b = i * 32;
        return find((long) LONGS.get(fps, b), (long) LONGS.get(fps, b + 8), (long) LONGS.get(fps, b + 16),
                (long) LONGS.get(fps, b + 24));
    }

    /**
     * How many input fingerprints from index {@code from} (exclusive bound {@code to}) equal the
     * live entries from offset {@code off} on: the length of the match that starts there.
     */
    public int extend(byte[] fps, int from, int to, int off) {
        int n = 0;
        int max = Math.min(to - from, count - off);
        long[] w = words;
        long[] p = pbns;
        int b = from * 32;
        int o = off * 4;
        while (n < max && p[off + n] != 0
                && w[o] == (long) LONGS.get(fps, b) && w[o + 1] == (long) LONGS.get(fps, b + 8)
                && w[o + 2] == (long) LONGS.get(fps, b + 16) && w[o + 3] == (long) LONGS.get(fps, b + 24)) {
            n++;
            b += 32;
            o += 4;
        }
        return n;
    }

    private void fiInsert(int off) {
        int mask = fi.length - 1;
        int b = off * 4;
        long w0 = words[b];
        int slot = (int) ((w0 * 0x9E3779B97F4A7C15L) >>> fiShift);
        while (true) {
            int v = fi[slot];
            if (v == 0) {
                fi[slot] = off + 1;
                return;
            }
            int ob = (v - 1) * 4;
            if (words[ob] == w0 && words[ob + 1] == words[b + 1] && words[ob + 2] == words[b + 2]
                    && words[ob + 3] == words[b + 3]) {
                fi[slot] = off + 1;
                return;
            }
            slot = (slot + 1) & mask;
        }
    }

    private void ensureCapacity(int needed) {
        int cap = pbns.length;
        if (needed <= cap) {
            return;
        }
        int next = cap;
        while (next < needed) {
            next = Math.min(maxFingerprints, next * 2);
        }
        allocate(next);
    }

    /**
     * Appends {@code len} input fingerprints from index {@code from} with their PBNs as a new stored
     * segment; returns its id. The caller checked {@link #hasRoom}.
     */
    public int appendSegment(byte[] fps, int from, int len, long[] pbnSrc, long stamp) {
        if (!hasRoom(len) || len <= 0) {
            throw new IllegalStateException("container " + id + " has no room for " + len + " fingerprints");
        }
        ensureCapacity(count + len);
        int start = count;
        for (int j = 0; j < len; j++) {
            int b = (from + j) * 32;
            int o = (start + j) * 4;
            words[o] = (long) LONGS.get(fps, b);
            words[o + 1] = (long) LONGS.get(fps, b + 8);
            words[o + 2] = (long) LONGS.get(fps, b + 16);
            words[o + 3] = (long) LONGS.get(fps, b + 24);
            long p = pbnSrc[from + j];
            if (p <= 0) {
                throw new IllegalArgumentException("PBN of a recorded fingerprint must be positive: " + p);
            }
            pbns[start + j] = p;
            fiInsert(start + j);
        }
        count += len;
        live += len;
        int seg = newSegment(start, start + len, stamp);
        for (int off = start; off < start + len; off++) {
            si[off * k] = seg;
        }
        markDirty();
        return seg;
    }

    private int newSegment(int start, int end, long stamp) {
        int s;
        if (freeSegCount > 0) {
            s = freeSegs[--freeSegCount];
        } else {
            if (segSlots == segStart.length) {
                int n = segSlots * 2;
                segStart = Arrays.copyOf(segStart, n);
                segEnd = Arrays.copyOf(segEnd, n);
                segExact = Arrays.copyOf(segExact, n);
                segUse = Arrays.copyOf(segUse, n);
                segFlags = Arrays.copyOf(segFlags, n);
            }
            s = segSlots++;
        }
        segStart[s] = start;
        segEnd[s] = end;
        segExact[s] = 0;
        segUse[s] = stamp;
        segFlags[s] = 0;
        liveSegments++;
        return s;
    }

    private void freeSegment(int s) {
        segStart[s] = -1;
        segEnd[s] = -1;
        liveSegments--;
        if (freeSegCount == freeSegs.length) {
            freeSegs = Arrays.copyOf(freeSegs, freeSegCount * 2);
        }
        freeSegs[freeSegCount++] = s;
    }

    /** Start offset of segment {@code s}. */
    public int segmentStart(int s) {
        return segStart[s];
    }

    /** End offset (exclusive) of segment {@code s}. */
    public int segmentEnd(int s) {
        return segEnd[s];
    }

    /** Times segment {@code s} was matched exactly. */
    public int exactMatches(int s) {
        return segExact[s];
    }

    /** True once segment {@code s} became a basic sharing unit (stable). */
    public boolean isStable(int s) {
        return (segFlags[s] & FLAG_STABLE) != 0;
    }

    /** Marks segment {@code s} stable. */
    public void setStable(int s) {
        segFlags[s] |= FLAG_STABLE;
        markDirty();
    }

    /** LRU stamp of segment {@code s}. */
    public long lastUse(int s) {
        return segUse[s];
    }

    /** Offset of the anchor of segment {@code s}: its fingerprint of highest sampling level. */
    public int anchorOffset(int s) {
        int best = segStart[s];
        int bestLevel = -1;
        for (int off = segStart[s]; off < segEnd[s]; off++) {
            int l = Long.numberOfLeadingZeros(words[off * 4]);
            if (l > bestLevel) {
                bestLevel = l;
                best = off;
            }
        }
        return best;
    }

    /** Segment id in SI slot {@code slot} (0..K-1) of offset {@code off}, or -1. */
    public int segmentAt(int off, int slot) {
        return si[off * k + slot];
    }

    /** Highest segment id ever used plus one (for iteration; check {@link #isLiveSegment}). */
    public int segmentSlots() {
        return segSlots;
    }

    /** True if {@code s} names a live segment. */
    public boolean isLiveSegment(int s) {
        return s >= 0 && s < segSlots && segStart[s] >= 0;
    }

    /** The live segment whose range is exactly {@code [start, end)}, or -1. */
    public int exactSegment(int start, int end) {
        int b = start * k;
        for (int j = 0; j < k; j++) {
            int s = si[b + j];
            if (s >= 0 && segStart[s] == start && segEnd[s] == end) {
                return s;
            }
        }
        return -1;
    }

    /** Counts one more exact match of {@code s}, moves it to the LRU head, returns the new count. */
    public int countExactMatch(int s, long stamp) {
        segUse[s] = stamp;
        markDirty();
        return ++segExact[s];
    }

    /** Moves every segment holding offsets {@code [start, end)} to the LRU head. */
    public void touchRange(int start, int end, long stamp) {
        for (int off = start; off < end; off++) {
            int b = off * k;
            for (int j = 0; j < k; j++) {
                int s = si[b + j];
                if (s >= 0) {
                    segUse[s] = stamp;
                }
            }
        }
    }

    /**
     * Merges adjacent segments that tile {@code [start, end)} exactly (two or more, total at most
     * {@code maxLen}) into the first; returns its id, or -1 if they do not tile the range.
     */
    public int mergeTiling(int start, int end, int maxLen, long stamp) {
        if (end - start > maxLen) {
            return -1;
        }
        int first = -1;
        int pos = start;
        int pieces = 0;
        while (pos < end) {
            int next = -1;
            int b = pos * k;
            for (int j = 0; j < k; j++) {
                int s = si[b + j];
                if (s >= 0 && segStart[s] == pos && segEnd[s] <= end) {
                    next = s;
                    break;
                }
            }
            if (next < 0) {
                return -1;
            }
            if (first < 0) {
                first = next;
            }
            pieces++;
            pos = segEnd[next];
        }
        if (pieces < 2) {
            return -1;
        }
        pos = segEnd[first];
        while (pos < end) {
            int b = pos * k;
            int piece = -1;
            for (int j = 0; j < k; j++) {
                int s = si[b + j];
                if (s >= 0 && s != first && segStart[s] == pos && segEnd[s] <= end) {
                    piece = s;
                    break;
                }
            }
            int pieceEnd = segEnd[piece];
            for (int off = pos; off < pieceEnd; off++) {
                replaceInSi(off, piece, first);
            }
            freeSegment(piece);
            pos = pieceEnd;
        }
        segEnd[first] = end;
        segExact[first] = 1;
        segFlags[first] = 0;
        segUse[first] = stamp;
        markDirty();
        return first;
    }

    private void replaceInSi(int off, int from, int to) {
        int b = off * k;
        for (int j = 0; j < k; j++) {
            if (si[b + j] == from) {
                si[b + j] = to;
                return;
            }
        }
    }

    /**
     * Forms a new stored segment over {@code [start, end)} (a partial match of existing segments).
     * Where an offset already belongs to K segments, the least recently used of them gives up its
     * overlap with the new segment, splitting it if the overlap is in its middle. Returns the id.
     */
    public int addSubSegment(int start, int end, long stamp) {
        int nv = 0;
        for (int off = start; off < end; off++) {
            int b = off * k;
            int victim = -1;
            boolean free = false;
            for (int j = 0; j < k; j++) {
                int s = si[b + j];
                if (s < 0) {
                    free = true;
                    break;
                }
                if (victim < 0 || segUse[s] < segUse[victim]) {
                    victim = s;
                }
            }
            if (!free) {
                boolean seen = false;
                for (int v = 0; v < nv; v++) {
                    if (victims[v] == victim) {
                        seen = true;
                        break;
                    }
                }
                if (!seen) {
                    if (nv == victims.length) {
                        victims = Arrays.copyOf(victims, nv * 2);
                    }
                    victims[nv++] = victim;
                }
            }
        }
        for (int v = 0; v < nv; v++) {
            trim(victims[v], start, end, stamp);
        }
        int seg = newSegment(start, end, stamp);
        for (int off = start; off < end; off++) {
            int b = off * k;
            for (int j = 0; j < k; j++) {
                if (si[b + j] < 0) {
                    si[b + j] = seg;
                    break;
                }
            }
        }
        markDirty();
        return seg;
    }

    /** Removes {@code [a, b)} from segment {@code v}, splitting it in two if needed. */
    private void trim(int v, int a, int b, long stamp) {
        int vs = segStart[v];
        int ve = segEnd[v];
        int from = Math.max(vs, a);
        int to = Math.min(ve, b);
        for (int off = from; off < to; off++) {
            removeFromSi(off, v);
        }
        if (vs < a && ve > b) {
            segEnd[v] = a;
            int right = newSegment(b, ve, segUse[v]);
            for (int off = b; off < ve; off++) {
                replaceInSi(off, v, right);
            }
        } else if (vs >= a && ve <= b) {
            freeSegment(v);
        } else if (vs >= a) {
            segStart[v] = b;
        } else {
            segEnd[v] = a;
        }
    }

    private void removeFromSi(int off, int s) {
        int b = off * k;
        for (int j = 0; j < k; j++) {
            if (si[b + j] == s) {
                si[b + j] = -1;
                return;
            }
        }
    }

    /**
     * Purges every live entry whose PBN {@code stale} accepts (lazy deletion); returns how many.
     * Purged entries keep their offset with PBN 0, so no match can cover them.
     */
    public int purge(LongPredicate stale, long throughSeq) {
        int removed = 0;
        for (int off = 0; off < count; off++) {
            long p = pbns[off];
            if (p != 0 && stale.test(p)) {
                pbns[off] = 0;
                removed++;
            }
        }
        if (removed > 0) {
            live -= removed;
            Arrays.fill(fi, 0);
            for (int off = 0; off < count; off++) {
                if (pbns[off] != 0) {
                    fiInsert(off);
                }
            }
            markDirty();
        }
        if (throughSeq > purgedSeq) {
            purgedSeq = throughSeq;
            markDirty();
        }
        return removed;
    }

    /** Sequence number of the last stale mark this container has been purged of. */
    public long purgedSeq() {
        return purgedSeq;
    }

    /** True if changed since last written. */
    public boolean isDirty() {
        return dirty;
    }

    /** Marks the container as changed since last written. */
    public void markDirty() {
        dirty = true;
        modifications++;
    }

    /** Number of changes so far; a writer compares it to know whether the copy it wrote is current. */
    public long modifications() {
        return modifications;
    }

    void markClean() {
        dirty = false;
    }

    /** Last time the store handed this container out (cache LRU). */
    long lastAccess() {
        return lastAccess;
    }

    void setLastAccess(long t) {
        lastAccess = t;
    }

    /** Bytes held by this container's arrays. */
    public long memoryBytes() {
        return 64L + words.length * 8L + pbns.length * 8L + fi.length * 4L + si.length * 4L
                + segStart.length * (4L * 3 + 8 + 1);
    }

    // --- access for ContainerFile ---

    int segmentCapacity() {
        return segSlots;
    }

    int siAt(int index) {
        return si[index];
    }

    int segmentFlags(int s) {
        return segFlags[s];
    }

    /** Restores state read from disk (ContainerFile). Segment ids are dense 0..segments-1. */
    void restore(long[] w, long[] p, int n, int[] starts, int[] ends, int[] exact, int[] flags, long[] use, int segs,
            int[] siIn, long purged) {
        if (pbns.length < n) {
            allocate(Math.max(n, 1));
        }
        System.arraycopy(w, 0, words, 0, n * 4);
        System.arraycopy(p, 0, pbns, 0, n);
        System.arraycopy(siIn, 0, si, 0, n * k);
        count = n;
        live = 0;
        Arrays.fill(fi, 0);
        for (int off = 0; off < n; off++) {
            if (pbns[off] != 0) {
                live++;
                fiInsert(off);
            }
        }
        for (int s = 0; s < segs; s++) {
            int id = newSegment(starts[s], ends[s], use[s]);
            segExact[id] = exact[s];
            segFlags[id] = (byte) (flags[s] & FLAG_STABLE);
        }
        for (int s = segs - 1; s >= 0; s--) {
            if ((flags[s] & FLAG_DEAD) != 0) {
                freeSegment(s);
            }
        }
        purgedSeq = purged;
        dirty = false;
    }
}
