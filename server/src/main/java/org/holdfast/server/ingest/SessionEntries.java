package org.holdfast.server.ingest;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.engine.DedupStream;

/**
 * The entries of a backup session that differ from the parent, in LBN order, with their input
 * segments and the request table: the session's tail since its last checkpoint (docs/architecture.md,
 * "Memory of a session"). Parallel arrays, no object per entry.
 *
 * <p>An entry is {@link #RESOLVED} (its PBN known), {@link #AWAITING} its payload (asked for in a
 * NEED), {@link #FOLLOWS} the earlier entry that owns the same fingerprint's request, or
 * {@link #STORING} (payload checked and sent to its home, PBN not known yet: {@link StoreWindow}).
 * The session's parts read and write the arrays directly (the hot path); a growing array is replaced,
 * so read them through this object, never keep one. Session lane only.
 */
final class SessionEntries {
    static final byte RESOLVED = 0;
    static final byte AWAITING = 1;
    static final byte FOLLOWS = 2;
    static final byte STORING = 3;

    private final int segmentMax;
    int count;
    long[] lbns = new long[1024];
    byte[] fps = new byte[1024 * Fingerprint.BYTES];
    long[] pbns = new long[1024];
    byte[] state = new byte[1024];
    boolean[] isNew = new boolean[1024];
    int[] owner = new int[1024];
    long[] tags = new long[1024];
    long[] candidate = new long[1024]; // a matched PBN whose possession was not proven (0: none)
    long[] repair = new long[1024]; // a matched PBN marked bad: the upload repairs it (0: none)
    long[] storingWorker = new long[1024]; // where the block goes if stored: the lookup's storing worker (member id)
    // input segments: [segStart[s], segStart[s] + segLen[s]) of the entry arrays
    int segments;
    int[] segStart = new int[64];
    int[] segLen = new int[64];
    // the entry that owns the request of each fingerprint asked for
    private FingerprintTable requested = new FingerprintTable(1024);
    private int awaiting;

    /** Entries cut into input segments of at most {@code segmentMax} (U_segment). */
    SessionEntries(int segmentMax) {
        this.segmentMax = segmentMax;
    }

    /** Adds the entry of {@code lbn} with the fingerprint at {@code in[off..+32)}; returns its index. */
    int add(long lbn, byte[] in, int off, byte st, long pbn) {
        if (count == lbns.length) {
            int c = count * 2;
            lbns = Arrays.copyOf(lbns, c);
            fps = Arrays.copyOf(fps, c * Fingerprint.BYTES);
            pbns = Arrays.copyOf(pbns, c);
            state = Arrays.copyOf(state, c);
            isNew = Arrays.copyOf(isNew, c);
            owner = Arrays.copyOf(owner, c);
            tags = Arrays.copyOf(tags, c);
            candidate = Arrays.copyOf(candidate, c);
            repair = Arrays.copyOf(repair, c);
            storingWorker = Arrays.copyOf(storingWorker, c);
        }
        int i = count++;
        lbns[i] = lbn;
        System.arraycopy(in, off, fps, i * Fingerprint.BYTES, Fingerprint.BYTES);
        pbns[i] = pbn;
        state[i] = st;
        isNew[i] = false;
        owner[i] = -1;
        tags[i] = 0;
        candidate[i] = 0;
        repair[i] = 0;
        storingWorker[i] = DedupStream.NO_WORKER;
        return i;
    }

    /**
     * Puts entry {@code idx} in an input segment: the last one if {@code adjacent} (its LBN follows
     * that segment's last) and it holds fewer than U_segment entries, else a new one.
     */
    void segment(int idx, boolean adjacent) {
        if (adjacent && segLen[segments - 1] < segmentMax) {
            segLen[segments - 1]++;
            return;
        }
        if (segments == segStart.length) {
            segStart = Arrays.copyOf(segStart, segments * 2);
            segLen = Arrays.copyOf(segLen, segments * 2);
        }
        segStart[segments] = idx;
        segLen[segments] = 1;
        segments++;
    }

    /**
     * Entry {@code idx} has no usable stored copy: it follows an earlier request of the same
     * fingerprint (returns false), or becomes a request of its own that the agent must answer (true).
     */
    boolean ask(int idx) {
        int o = requested.get(fps, idx * Fingerprint.BYTES, fps);
        if (o >= 0) {
            state[idx] = FOLLOWS;
            owner[idx] = o;
            return false;
        }
        requested.put(idx, fps);
        state[idx] = AWAITING;
        awaiting++;
        return true;
    }

    /** Entry {@code idx}'s requested payload came: it refers to {@code pbn}, a block it stored ({@code fresh}) or one already there. */
    void answered(int idx, long pbn, boolean fresh) {
        pbns[idx] = pbn;
        isNew[idx] = fresh;
        state[idx] = RESOLVED;
        awaiting--;
    }

    /** Requests whose payload has not come yet. */
    int awaiting() {
        return awaiting;
    }

    /** The index of the entry of {@code lbn} if it waits for its payload, else -1. */
    int awaitedEntry(long lbn) {
        int idx = Arrays.binarySearch(lbns, 0, count, lbn);
        return idx >= 0 && state[idx] == AWAITING ? idx : -1;
    }

    /** Whether entry {@code i}'s PBN is known: resolved, or following a resolved owner. */
    boolean isResolved(int i) {
        return state[i] == RESOLVED || (state[i] == FOLLOWS && state[owner[i]] == RESOLVED);
    }

    /** Follower {@code i} takes its owner's PBN, and so its owner's storing worker (the PBN lies in that worker's range). */
    void resolveFollower(int i) {
        pbns[i] = pbns[owner[i]];
        storingWorker[i] = storingWorker[owner[i]];
        state[i] = RESOLVED;
    }

    /** Resolves every follower whose owner is one of entries {@code [0, k)} and resolved. */
    void resolveFollowersOf(int k) {
        for (int i = 0; i < count; i++) {
            if (state[i] == FOLLOWS && owner[i] < k && state[owner[i]] == RESOLVED) {
                resolveFollower(i);
            }
        }
    }

    /**
     * The length of the longest prefix of resolved entries, cut back so that it splits no input
     * segment (the engine learns whole segments); 0 if the first entry is not resolved.
     */
    int resolvedPrefix() {
        int k = 0;
        while (k < count && isResolved(k)) {
            k++;
        }
        int s = segmentsWithin(k);
        if (s < segments && segStart[s] < k) {
            k = segStart[s];
        }
        return k;
    }

    /** How many input segments lie wholly in entries {@code [0, k)} (segments are in entry order). */
    int segmentsWithin(int k) {
        int s = 0;
        while (s < segments && segStart[s] + segLen[s] <= k) {
            s++;
        }
        return s;
    }

    /**
     * Removes entries {@code [0, k)} and segments {@code [0, s)}, renumbering what stays; the
     * request table keeps the requests of the entries that stay. Followers of a removed owner must
     * have been resolved ({@link #resolveFollowersOf}).
     */
    void dropPrefix(int k, int s) {
        FingerprintTable kept = new FingerprintTable(Math.max(1024, count - k));
        int left = count - k;
        // which remaining entries own a request, asked while the old numbering holds
        int[] owners = new int[left];
        int ownerCount = 0;
        for (int i = k; i < count; i++) {
            if (state[i] != FOLLOWS && requested.get(fps, i * Fingerprint.BYTES, fps) == i) {
                owners[ownerCount++] = i - k;
            }
        }
        System.arraycopy(lbns, k, lbns, 0, left);
        System.arraycopy(fps, k * Fingerprint.BYTES, fps, 0, left * Fingerprint.BYTES);
        System.arraycopy(pbns, k, pbns, 0, left);
        System.arraycopy(state, k, state, 0, left);
        System.arraycopy(isNew, k, isNew, 0, left);
        System.arraycopy(owner, k, owner, 0, left);
        System.arraycopy(tags, k, tags, 0, left);
        System.arraycopy(candidate, k, candidate, 0, left);
        System.arraycopy(repair, k, repair, 0, left);
        System.arraycopy(storingWorker, k, storingWorker, 0, left);
        for (int i = 0; i < left; i++) {
            if (state[i] == FOLLOWS) {
                owner[i] -= k; // followers of a dropped owner were resolved above, so this owner stays
            }
        }
        for (int j = 0; j < ownerCount; j++) {
            kept.put(owners[j], fps);
        }
        requested = kept;
        count = left;
        System.arraycopy(segStart, s, segStart, 0, segments - s);
        System.arraycopy(segLen, s, segLen, 0, segments - s);
        segments -= s;
        for (int j = 0; j < segments; j++) {
            segStart[j] -= k;
        }
    }
}
