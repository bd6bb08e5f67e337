package org.holdfast.server.ingest.cluster;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The DATA_STOREs a worker answered that the master has not protected yet, per link (distributed GC):
 * what keeps a stored block's own grace expiry from freeing it before the master's session could.
 *
 * <p>The worker gives every block it appends for a DATA_STORE an expiry of its answer time + grace
 * ({@link org.holdfast.gc.sweep.GraceGuard#protectStored}), so a block whose DATA_STORED the link lost
 * (the worker died after the append, the link closed) is freed by the range's own sweep once the grace
 * has passed, rather than kept forever with a PBN the master never learnt. A block whose answer did
 * arrive is protected by the master's session once the session lands it (GC_PROTECT), which may be
 * longer than the grace after the answer (a session lands its stores at its next BLOCKS frame or at
 * COMMIT). So while a link lives, {@link #cap} holds the range's sweep horizon at the oldest answer
 * time + grace among the stores answered over it and not yet protected over it: such a block never
 * looks expired before its session protected it, and from then on the session's tie holds it
 * ({@link org.holdfast.gc.sweep.GraceGuard#sweepHorizon}), then its reference count.
 *
 * <p>When the link ends its entries go: a session commits only after a DATA_SYNC over the very link
 * that stored its blocks ({@code WorkerBlockHome} syncs the links it stored on, by identity), and a
 * checkpoint likewise, so no snapshot can reference a block answered over an ended link that was not
 * protected over it; the block's own expiry then frees it after the grace. A store served after its
 * link ended ({@link Link#answered} on a closed link) cannot be answered at all: it gets its expiry
 * and no entry.
 *
 * <p>Bounded: at most {@link #MAX_PER_LINK} entries per link (a master whose GC bookkeeping is off
 * protects nothing); a store past that is left without an expiry, as before this class (never swept:
 * a leak, not a loss), and its link logs that once.
 */
public final class AnsweredStores {
    private static final System.Logger LOG = System.getLogger(AnsweredStores.class.getName());
    /** Entries one link keeps at most (a few MiB): far above what 1,024 sessions with 8 stores in flight each hold. */
    static final int MAX_PER_LINK = 65_536;

    private final Clock clock;
    private final Duration grace;
    private final List<Link> links = new ArrayList<>(); // guarded by this

    /** Stores answered on the worker whose clock is {@code clock} and whose guard's grace is {@code grace}. */
    public AnsweredStores(Clock clock, Duration grace) {
        this.clock = clock;
        this.grace = grace;
    }

    /** One answered store: its answer time and which of its blocks were protected since. */
    private static final class Entry {
        final long at;
        final int count;
        final BitSet protectedMembers;

        Entry(long at, int count) {
            this.at = at;
            this.count = count;
            this.protectedMembers = new BitSet(count);
        }
    }

    /** The stores answered over one link; closed when the link ends. */
    public final class Link {
        private final TreeMap<Long, Entry> entries = new TreeMap<>(); // by first PBN; guarded by AnsweredStores.this
        private boolean closed;
        private boolean fullReported;

        private Link() {
        }

        /**
         * Records the blocks {@code first..first+count)} just appended for a DATA_STORE of this link,
         * before their expiry is raised; returns the answer time to raise it from, or -1 if this link
         * keeps {@link #MAX_PER_LINK} entries already (raise nothing: the block stays untracked). On a
         * closed link nothing is recorded (its answer cannot be sent) and the time is returned.
         */
        public long answered(long first, int count) {
            synchronized (AnsweredStores.this) {
                long at = clock.millis(); // under the lock that cap reads under (see cap)
                if (closed) {
                    return at;
                }
                if (entries.size() >= MAX_PER_LINK) {
                    if (!fullReported) {
                        fullReported = true;
                        LOG.log(System.Logger.Level.INFO, "the master has not protected " + MAX_PER_LINK + " of the DATA_STOREs this"
                                + " worker answered over this link (GC bookkeeping off on the master?); later blocks stored over it get"
                                + " no grace expiry of their own, so a block whose answer is lost stays stored until an fsck finds it");
                    }
                    return -1;
                }
                entries.put(first, new Entry(at, count));
                return at;
            }
        }

        /** The master's session protected {@code pbns[off..off+n)} over this link (after the raise was logged). */
        public void protectedPbns(long[] pbns, int off, int n) {
            synchronized (AnsweredStores.this) {
                if (entries.isEmpty()) {
                    return;
                }
                for (int i = off; i < off + n; i++) {
                    Map.Entry<Long, Entry> e = entries.floorEntry(pbns[i]);
                    if (e != null && pbns[i] - e.getKey() < e.getValue().count) {
                        Entry s = e.getValue();
                        s.protectedMembers.set((int) (pbns[i] - e.getKey()));
                        if (s.protectedMembers.cardinality() == s.count) {
                            entries.remove(e.getKey());
                        }
                    }
                }
            }
        }

        /** The link ended: its entries go (see the class comment). */
        public void close() {
            synchronized (AnsweredStores.this) {
                closed = true;
                entries.clear();
                links.remove(this);
            }
        }

        /** Stores answered over it and not yet wholly protected (tests). */
        public int size() {
            synchronized (AnsweredStores.this) {
                return entries.size();
            }
        }
    }

    /** The answered stores of a link just registered. */
    public synchronized Link open() {
        Link l = new Link();
        links.add(l);
        return l;
    }

    /**
     * {@code asOf}, capped at the oldest answer time + grace of a store answered over a live link and
     * not yet protected. Read it before the guard's {@code sweepHorizon}: an entry removed before this
     * read was protected first, so its session was open before the guard's read (which it caps), or
     * has ended since (committed, with its counts delivered; or abandoned).
     */
    public synchronized long cap(long asOf) {
        long h = asOf;
        for (Link l : links) {
            for (Entry e : l.entries.values()) {
                h = Math.min(h, e.at + grace.toMillis());
            }
        }
        return h;
    }

    /** Stores answered over live links and not yet wholly protected (tests and logs). */
    public synchronized int pending() {
        int n = 0;
        for (Link l : links) {
            n += l.entries.size();
        }
        return n;
    }
}
