package org.holdfast.server.engine;

import java.util.Arrays;
import org.holdfast.server.container.Container;

/**
 * The sampled fingerprint index (SFI, thesis 5.4.1 and 5.4.2): a fixed-size in-memory map from
 * sample fingerprints to the containers that hold them, the anchors that bring containers in.
 *
 * <p><b>Which fingerprints are samples.</b> Sampling is content-defined so that the same block is a
 * sample wherever it appears: the <em>level</em> of a fingerprint is the number of leading zero bits
 * of its first word (P(level &gt;= j) = 2^-j). A stored segment at sampling level L keeps, as samples,
 * its fingerprints of level &gt;= L; its <em>anchor</em> (the one of highest level) is always kept. A
 * new segment starts at level log2(S_init), about one sample per S_init fingerprints. Down-sampling
 * raises the level by one, which halves the expected samples and keeps a subset of the previous ones.
 * A stable segment (matched exactly T_BSU times) keeps only its anchor (the thesis), or, with the
 * engine's {@code stableLevels} setting, is down-sampled by that many levels: partial matches of
 * stable segments (regions shifted out of them) are then still found. Because no sample can have a
 * level under {@link #MIN_PROBE_LEVEL}, a lookup probes only a quarter of the input fingerprints.
 *
 * <p><b>Rate-based LRU.</b> Each stored segment with samples has a <em>record</em> in an LRU list;
 * a match moves it to the head. When the entry pool is full, the records at the tail are
 * down-sampled one level at a time (a cursor walks the older half of the list and wraps back to the
 * tail),
 * and a record already down to one sample is evicted. Stable segments, matched often, sit near the
 * head and keep their single sample.
 *
 * <p><b>Memory.</b> Primitive arrays only, sized once from S_SFI: an entry pool (key, container,
 * record, next-in-record: 20 bytes), a linear-probing table of entry ids (load at most 3/4), and a
 * record pool (23 bytes each, half as many as entries). Keys are the first 8 bytes of the
 * fingerprint: a collision can only load a useless container, never produce a duplicate verdict,
 * which always needs an exact 32-byte match in the container.
 *
 * <p>Not thread-safe; the engine guards it with a read-write lock.
 */
public final class SampledFingerprintIndex {
    /** Lowest level a sample may have: a fingerprint of lower level is never probed. */
    public static final int MIN_PROBE_LEVEL = 2;
    private final int[] levelHist = new int[65];

    private int samplesAtOrAbove(int level) {
        int n = 0;
        for (int l = Math.min(level, 64); l <= 64; l++) {
            n += levelHist[l];
        }
        return n;
    }

    /** Level marking a stable record (anchor only). */
    static final int STABLE = 127;
    private static final int ENTRY_BYTES = 20;
    private static final int RECORD_BYTES = 23;
    private static final int TAIL_WINDOW = 64;

    private final long[] entryKey;
    private final int[] entryContainer;
    private final int[] entryRecord;
    private final int[] entryNext;
    private int freeEntry;
    private int usedEntries;

    private final int[] table;
    private final int tableShift;

    private final int[] recHead;
    private final short[] recCount;
    private final byte[] recLevel;
    private final int[] recContainer;
    private final int[] recSegment;
    private final int[] recPrev;
    private final int[] recNext;
    private int freeRecord;
    private int usedRecords;
    private int lruHead = -1;
    private int lruTail = -1;
    private int cursor = -1;
    private int cursorSteps;

    private long downsamples;
    private long evictions;
    private long stabilized;

    /** An SFI using at most {@code budgetBytes} of memory. */
    public SampledFingerprintIndex(long budgetBytes) {
        int entries = (int) Math.min(1 << 28, Math.max(16, budgetBytes / (ENTRY_BYTES + 6 + RECORD_BYTES / 2)));
        int tableSize = Integer.highestOneBit(Math.max(16, entries * 4 / 3 + 1));
        if ((long) tableSize * 3 / 4 < entries) {
            tableSize <<= 1;
        }
        // Spend what the power-of-two table left over on more entries.
        long rest = budgetBytes - tableSize * 4L;
        entries = (int) Math.max(8, Math.min((long) tableSize * 3 / 4, rest * 2 / (2L * ENTRY_BYTES + RECORD_BYTES)));
        int records = Math.max(4, entries / 2);
        entryKey = new long[entries];
        entryContainer = new int[entries];
        entryRecord = new int[entries];
        entryNext = new int[entries];
        for (int e = 0; e < entries; e++) {
            entryNext[e] = e + 1 < entries ? e + 1 : -1;
        }
        freeEntry = 0;
        table = new int[tableSize];
        tableShift = 64 - Integer.numberOfTrailingZeros(tableSize);
        recHead = new int[records];
        recCount = new short[records];
        recLevel = new byte[records];
        recContainer = new int[records];
        recSegment = new int[records];
        recPrev = new int[records];
        recNext = new int[records];
        for (int r = 0; r < records; r++) {
            recNext[r] = r + 1 < records ? r + 1 : -1;
            recHead[r] = -1;
        }
        freeRecord = 0;
    }

    /** Sampling level of a fingerprint whose first word is {@code w0}. */
    public static int level(long w0) {
        return Long.numberOfLeadingZeros(w0);
    }

    /** Initial sampling level for S_init (a power of two): log2(S_init), at least {@link #MIN_PROBE_LEVEL}. */
    public static int initialLevel(int sInit) {
        return Math.max(MIN_PROBE_LEVEL, 31 - Integer.numberOfLeadingZeros(Math.max(1, sInit)));
    }

    private int slotOf(long key) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> tableShift);
    }

    /** Added to {@link #probe}'s result when the key is a sample. */
    public static final int HIT = 1 << 16;

    /**
     * Adds the containers that hold sample {@code key} to {@code out[0..n)} (no repeats, at most
     * {@code out.length} &lt; 65536); returns the new n, plus {@link #HIT} if the key is a sample.
     */
    public int probe(long key, int[] out, int n) {
        int hit = 0;
        int mask = table.length - 1;
        int slot = slotOf(key);
        while (true) {
            int v = table[slot];
            if (v == 0) {
                return n + hit;
            }
            int e = v - 1;
            if (entryKey[e] == key) {
                hit = HIT;
                int c = entryContainer[e];
                boolean seen = false;
                for (int i = 0; i < n; i++) {
                    if (out[i] == c) {
                        seen = true;
                        break;
                    }
                }
                if (!seen && n < out.length) {
                    out[n++] = c;
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    private boolean containsPair(long key, int container) {
        int mask = table.length - 1;
        int slot = slotOf(key);
        while (true) {
            int v = table[slot];
            if (v == 0) {
                return false;
            }
            int e = v - 1;
            if (entryKey[e] == key && entryContainer[e] == container) {
                return true;
            }
            slot = (slot + 1) & mask;
        }
    }

    /** The record of {@code segment} of {@code container} that holds sample {@code anchorKey}, or -1. */
    public int findRecord(long anchorKey, int container, int segment) {
        int mask = table.length - 1;
        int slot = slotOf(anchorKey);
        while (true) {
            int v = table[slot];
            if (v == 0) {
                return -1;
            }
            int e = v - 1;
            if (entryKey[e] == anchorKey && entryContainer[e] == container && recSegment[entryRecord[e]] == segment) {
                return entryRecord[e];
            }
            slot = (slot + 1) & mask;
        }
    }

    /**
     * Adds a stored segment's samples: of the keys of offsets {@code [start, end)} of {@code c}, those
     * of level &gt;= {@code level} plus the anchor (only the anchor if {@code stable}). Keys already
     * sampled for this container are skipped. Returns the new record, or -1 if the segment yields no
     * sample.
     */
    public int addSegment(Container c, int segment, int start, int end, int level, boolean stable) {
        int container = c.id();
        int anchor = -1;
        int anchorLevel = -1;
        java.util.Arrays.fill(levelHist, 0);
        for (int o = start; o < end; o++) {
            int l = level(c.key(o));
            levelHist[l]++;
            if (l > anchorLevel) {
                anchorLevel = l;
                anchor = o;
            }
        }
        if (anchor < 0 || anchorLevel < MIN_PROBE_LEVEL) {
            return -1;
        }
        int wanted = samplesAtOrAbove(level);
        // Under memory pressure a new segment starts no denser than twice the average record: at
        // S_init it could take a large share of a small SFI and push whole older segments out,
        // which the rate-based LRU exists to avoid (measured: efficiency collapsed at 1/128).
        if (!stable && usedRecords > 0 && usedEntries + wanted > entryKey.length) {
            int cap = Math.max(1, 2 * usedEntries / usedRecords);
            while (wanted > cap && level < 64) {
                level++;
                wanted = samplesAtOrAbove(level);
            }
        }
        int effective = stable ? STABLE : level;
        if (stable || wanted == 0) {
            wanted = 1;
        }
        wanted = Math.min(wanted, Short.MAX_VALUE);
        makeRoom(wanted);
        int r = freeRecord;
        freeRecord = recNext[r];
        usedRecords++;
        recHead[r] = -1;
        recCount[r] = 0;
        recLevel[r] = (byte) effective;
        recContainer[r] = container;
        recSegment[r] = segment;
        linkHead(r);
        if (effective == STABLE || level > 64) {
            if (!containsPair(c.key(anchor), container)) {
                addEntry(r, c.key(anchor), container);
            }
        } else {
            for (int o = start; o < end && recCount[r] < wanted; o++) {
                long key = c.key(o);
                if ((level(key) >= level || o == anchor) && !containsPair(key, container)) {
                    addEntry(r, key, container);
                }
            }
        }
        if (recCount[r] == 0) {
            unlink(r);
            freeRecordSlot(r);
            return -1;
        }
        return r;
    }

    private void addEntry(int r, long key, int container) {
        if (freeEntry < 0) {
            return;
        }
        int e = freeEntry;
        freeEntry = entryNext[e];
        entryKey[e] = key;
        entryContainer[e] = container;
        entryRecord[e] = r;
        entryNext[e] = recHead[r];
        recHead[r] = e;
        recCount[r]++;
        usedEntries++;
        int mask = table.length - 1;
        int slot = slotOf(key);
        while (table[slot] != 0) {
            slot = (slot + 1) & mask;
        }
        table[slot] = e + 1;
    }

    private void removeEntry(int e) {
        int mask = table.length - 1;
        int i = slotOf(entryKey[e]);
        while (table[i] != e + 1) {
            i = (i + 1) & mask;
        }
        // Backward-shift deletion keeps every probe chain unbroken without tombstones.
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            int v = table[j];
            if (v == 0) {
                break;
            }
            int home = slotOf(entryKey[v - 1]);
            boolean movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
            if (movable) {
                table[i] = v;
                i = j;
            }
        }
        table[i] = 0;
        entryNext[e] = freeEntry;
        freeEntry = e;
        usedEntries--;
    }

    /** True if record {@code r} still describes segment {@code segment} of {@code container}. */
    public boolean isRecordOf(int r, int container, int segment) {
        return r >= 0 && r < recHead.length && recCount[r] > 0 && recContainer[r] == container
                && recSegment[r] == segment;
    }

    /** Moves record {@code r} to the LRU head (its segment was matched). */
    public void touch(int r) {
        if (r == lruHead) {
            return;
        }
        unlink(r);
        linkHead(r);
    }

    /**
     * The segment of record {@code r} became stable: with {@code levels} = 0 it keeps only its anchor
     * (the thesis), otherwise it is down-sampled by that many levels (2^levels times fewer samples).
     */
    public void stabilize(int r, int levels) {
        if (levels > 0) {
            for (int i = 0; i < levels && recCount[r] > 1; i++) {
                downsample(r);
            }
            stabilized++;
            return;
        }
        int keep = anchorOf(r);
        int e = recHead[r];
        int kept = -1;
        while (e >= 0) {
            int next = entryNext[e];
            if (e == keep) {
                kept = e;
            } else {
                removeEntry(e);
                recCount[r]--;
            }
            e = next;
        }
        entryNext[kept] = -1;
        recHead[r] = kept;
        recLevel[r] = (byte) STABLE;
        stabilized++;
    }

    private int anchorOf(int r) {
        int best = -1;
        int bestLevel = -1;
        for (int e = recHead[r]; e >= 0; e = entryNext[e]) {
            int l = level(entryKey[e]);
            if (l > bestLevel) {
                bestLevel = l;
                best = e;
            }
        }
        return best;
    }

    /** Samples currently held for record {@code r}. */
    public int samples(int r) {
        return recCount[r];
    }

    private void makeRoom(int entries) {
        int guard = 0;
        while ((usedEntries + entries > entryKey.length || freeRecord < 0) && lruTail >= 0
                && guard++ < 4 * recHead.length + 64) {
            step();
        }
        // A segment with more samples than the whole SFI holds gets as many as fit.
    }

    /** One step of rate-based LRU replacement. */
    private void step() {
        // The window is the older half of the LRU (at least TAIL_WINDOW records): a fixed small window
        // let new segments, which arrive with many samples, crowd out whole older ones while the
        // rest of the list kept all its samples (measured: efficiency collapsed at S_SFI = 1/128).
        if (cursor < 0 || recCount[cursor] == 0 || cursorSteps >= Math.max(TAIL_WINDOW, usedRecords / 2)) {
            cursor = lruTail;
            cursorSteps = 0;
        }
        int r = cursor;
        if (recCount[r] > 1) {
            downsample(r);
            cursor = recPrev[r];
            cursorSteps++;
        } else {
            cursor = recPrev[r];
            evict(r);
        }
    }

    private void downsample(int r) {
        int anchor = anchorOf(r);
        int count = recCount[r];
        int level = recLevel[r] & 0xff;
        int next = level;
        int kept = count;
        while (kept >= count && next < 65) {
            next++;
            kept = 0;
            for (int e = recHead[r]; e >= 0; e = entryNext[e]) {
                if (e == anchor || level(entryKey[e]) >= next) {
                    kept++;
                }
            }
        }
        int prev = -1;
        int e = recHead[r];
        while (e >= 0) {
            int following = entryNext[e];
            if (e == anchor || level(entryKey[e]) >= next) {
                prev = e;
            } else {
                if (prev < 0) {
                    recHead[r] = following;
                } else {
                    entryNext[prev] = following;
                }
                removeEntry(e);
                recCount[r]--;
            }
            e = following;
        }
        recLevel[r] = (byte) Math.min(next, STABLE - 1);
        downsamples++;
    }

    private void evict(int r) {
        int e = recHead[r];
        while (e >= 0) {
            int next = entryNext[e];
            removeEntry(e);
            e = next;
        }
        recCount[r] = 0;
        recHead[r] = -1;
        unlink(r);
        freeRecordSlot(r);
        evictions++;
    }

    private void freeRecordSlot(int r) {
        recCount[r] = 0;
        recNext[r] = freeRecord;
        freeRecord = r;
        usedRecords--;
    }

    private void linkHead(int r) {
        recPrev[r] = -1;
        recNext[r] = lruHead;
        if (lruHead >= 0) {
            recPrev[lruHead] = r;
        }
        lruHead = r;
        if (lruTail < 0) {
            lruTail = r;
        }
    }

    private void unlink(int r) {
        int p = recPrev[r];
        int n = recNext[r];
        if (p >= 0) {
            recNext[p] = n;
        } else {
            lruHead = n;
        }
        if (n >= 0) {
            recPrev[n] = p;
        } else {
            lruTail = p;
        }
        if (cursor == r) {
            cursor = p;
        }
    }

    /** Back to the empty state, whatever the arrays hold (after a snapshot failed to load half way). */
    void resetAfterFailedLoad() {
        java.util.Arrays.fill(table, 0);
        for (int e = 0; e < entryKey.length; e++) {
            entryNext[e] = e + 1 < entryKey.length ? e + 1 : -1;
        }
        for (int r = 0; r < recHead.length; r++) {
            recNext[r] = r + 1 < recHead.length ? r + 1 : -1;
            recHead[r] = -1;
            recCount[r] = 0;
        }
        freeEntry = 0;
        usedEntries = 0;
        freeRecord = 0;
        usedRecords = 0;
        lruHead = -1;
        lruTail = -1;
        cursor = -1;
    }

    /** Drops every sample (used before a rebuild). */
    public void clear() {
        while (lruTail >= 0) {
            evict(lruTail);
        }
        evictions = 0;
    }

    /** Sample entries held. */
    public int entries() {
        return usedEntries;
    }

    /** Entry capacity. */
    public int capacity() {
        return entryKey.length;
    }

    /** Records (segments with samples) held. */
    public int records() {
        return usedRecords;
    }

    /** Down-sampling steps so far. */
    public long downsamples() {
        return downsamples;
    }

    /** Records evicted so far. */
    public long evictions() {
        return evictions;
    }

    /** Records reduced to one sample because their segment became stable. */
    public long stabilized() {
        return stabilized;
    }

    /** Sampling level of record {@code r} ({@link #STABLE} once stable). */
    int levelOf(int r) {
        return recLevel[r] & 0xff;
    }

    /** Records from LRU head to tail (tests). */
    int[] lruOrder() {
        int[] out = new int[usedRecords];
        int i = 0;
        for (int r = lruHead; r >= 0 && i < out.length; r = recNext[r]) {
            out[i++] = r;
        }
        return Arrays.copyOf(out, i);
    }

    /** First word of a snapshot of format 2 and later ("SFIS"); a format 1 snapshot starts with the int 1. */
    static final int SNAPSHOT_MAGIC = 0x53464953;
    /** Snapshot format written now: the records in LRU order with their samples, nothing unused. */
    static final int SNAPSHOT_VERSION = 2;
    /** The first format: a dump of every array at its full S_SFI size, used or not (read, never written). */
    static final int SNAPSHOT_VERSION_1 = 1;

    /**
     * Writes the used state (for a clean shutdown: the next start loads it instead of rebuilding),
     * in format 2 (docs/architecture.md, "SFI snapshot"): about 8 bytes per sample and 11 per
     * record, so the file grows with what the SFI holds, not with S_SFI.
     */
    void writeTo(java.io.DataOutputStream out) throws java.io.IOException {
        out.writeInt(SNAPSHOT_MAGIC);
        out.writeInt(SNAPSHOT_VERSION);
        out.writeInt(entryKey.length);
        out.writeInt(table.length);
        out.writeInt(recHead.length);
        out.writeInt(usedRecords);
        // tail first, so that linking each loaded record at the head rebuilds the same LRU order
        for (int r = lruTail; r >= 0; r = recPrev[r]) {
            out.writeByte(recLevel[r]);
            out.writeInt(recContainer[r]);
            out.writeInt(recSegment[r]);
            out.writeShort(recCount[r]);
            for (int e = recHead[r]; e >= 0; e = entryNext[e]) {
                out.writeLong(entryKey[e]);
            }
        }
    }

    /**
     * Loads a state written by {@link #writeTo} (format 2) or by the first release (format 1)
     * into this (empty) index; false if the snapshot has another version or was made for another
     * S_SFI (the caller then resets and rebuilds). Sizes come from this index, never from the
     * file, so nothing is allocated on the file's word.
     */
    boolean readFrom(java.io.DataInputStream in) throws java.io.IOException {
        int first = in.readInt();
        if (first == SNAPSHOT_VERSION_1) {
            return readV1(in);
        }
        if (first != SNAPSHOT_MAGIC || in.readInt() != SNAPSHOT_VERSION || in.readInt() != entryKey.length
                || in.readInt() != table.length || in.readInt() != recHead.length) {
            return false;
        }
        int records = in.readInt();
        if (records < 0 || records > recHead.length) {
            return false;
        }
        for (int i = 0; i < records; i++) {
            byte level = in.readByte();
            int container = in.readInt();
            int segment = in.readInt();
            int count = in.readShort();
            if (count < 1 || usedEntries + count > entryKey.length || freeRecord < 0) {
                return false;
            }
            int r = freeRecord;
            freeRecord = recNext[r];
            usedRecords++;
            recHead[r] = -1;
            recCount[r] = 0;
            recLevel[r] = level;
            recContainer[r] = container;
            recSegment[r] = segment;
            linkHead(r);
            long[] keys = new long[count];
            for (int k = 0; k < count; k++) {
                keys[k] = in.readLong();
            }
            for (int k = count - 1; k >= 0; k--) {
                addEntry(r, keys[k], container); // prepends: the chain keeps the written order
            }
        }
        cursor = -1;
        return true;
    }

    /** Format 1 after its version word: sizes, counters and every array whole. */
    private boolean readV1(java.io.DataInputStream in) throws java.io.IOException {
        if (in.readInt() != entryKey.length || in.readInt() != table.length || in.readInt() != recHead.length) {
            return false;
        }
        int fe = in.readInt();
        int ue = in.readInt();
        int fr = in.readInt();
        int ur = in.readInt();
        int head = in.readInt();
        int tail = in.readInt();
        for (int e = 0; e < entryKey.length; e++) {
            entryKey[e] = in.readLong();
            entryContainer[e] = in.readInt();
            entryRecord[e] = in.readInt();
            entryNext[e] = in.readInt();
        }
        for (int i = 0; i < table.length; i++) {
            table[i] = in.readInt();
        }
        for (int r = 0; r < recHead.length; r++) {
            recHead[r] = in.readInt();
            recCount[r] = in.readShort();
            recLevel[r] = in.readByte();
            recContainer[r] = in.readInt();
            recSegment[r] = in.readInt();
            recPrev[r] = in.readInt();
            recNext[r] = in.readInt();
        }
        freeEntry = fe;
        usedEntries = ue;
        freeRecord = fr;
        usedRecords = ur;
        lruHead = head;
        lruTail = tail;
        cursor = -1;
        return true;
    }

    /** Bytes held by the arrays (the whole S_SFI allocation). */
    public long memoryBytes() {
        return entryKey.length * (long) ENTRY_BYTES + table.length * 4L + recHead.length * (long) RECORD_BYTES;
    }
}
