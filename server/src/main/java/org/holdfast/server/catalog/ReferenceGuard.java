package org.holdfast.server.catalog;

/**
 * Protects the PBNs an uncommitted backup session relies on from a concurrent GC sweep.
 *
 * <p>The ingest calls {@link #protect} with every PBN a session will reference before the session
 * relies on it: duplicates right after the fingerprint index found them, new blocks right after
 * they were stored. Once the session commits (its references are then counted by the
 * {@link CommitHook}) or is abandoned, the ingest calls {@link #release}. The GC implementation
 * gives protected PBNs a grace expiry (now + grace) so a sweep cannot free them underneath.
 * Implementations must be thread-safe: sessions of different volumes run in parallel.
 */
public interface ReferenceGuard {

    /** Session {@code sessionId} is about to reference {@code pbns[off..off+count)} (0 entries are the zero block). */
    void protect(long sessionId, long[] pbns, int off, int count);

    /**
     * Like {@link #protect}, but a PBN that can no longer be protected (garbage collection is
     * reclaiming it) is not an error: its entry in {@code pbns} is set to 0 and counted in the
     * answer, and the caller must store that block anew. The default protects everything or throws.
     */
    default int protectOrRefuse(long sessionId, long[] pbns, int off, int count) {
        protect(sessionId, pbns, off, count);
        return 0;
    }

    /**
     * True only if GC counts a reference to {@code pbn} (reference count above 0), so a committed
     * snapshot references it; false if it counts none or keeps no counts (bookkeeping off). The
     * ingest asks this of a bad block whose dedup domain is not recorded. The default knows no counts.
     */
    default boolean counted(long pbn) {
        return false;
    }

    /** Session {@code sessionId} ended; {@code committed} tells whether its snapshot now holds the references. */
    void release(long sessionId, boolean committed);

    /** Protects nothing. */
    ReferenceGuard NONE = new ReferenceGuard() {
        @Override
        public void protect(long sessionId, long[] pbns, int off, int count) {
        }

        @Override
        public void release(long sessionId, boolean committed) {
        }
    };
}
