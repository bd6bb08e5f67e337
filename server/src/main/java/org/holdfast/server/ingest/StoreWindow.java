package org.holdfast.server.ingest;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.store.BlockHome;

/**
 * A backup session's appends of new blocks that may still wait for their PBNs: up to
 * {@link BlockHome#storesInFlight()} of them (data on workers: DATA_STOREs whose DATA_STORED has not
 * come back), so the session goes on checking the next blocks while the worker stores the last ones.
 *
 * <p>A store <em>lands</em> once its PBNs are known: the session's {@link Landing} resolves each of
 * its entries, and the PBNs are protected from the GC sweep in one call per BLOCKS frame
 * ({@link #protectLanded}), as before the window. Stores land in the order they were sent. The session
 * lands every store ({@link #landAll}) before anything that needs all of its PBNs or makes them durable:
 * a checkpoint, COMMIT (so a snapshot commits only after every one of its blocks was acknowledged by
 * its worker and then synced), and an abandonment. A failed store fails the landing that meets it
 * (the session then ends, nothing committed); the stores after it are never resolved unless they
 * succeeded by the time the session is abandoned. A block a worker stored for a session that ends
 * uncommitted is referenced by no snapshot: GC reclaims it, as any abandoned session's blocks.
 *
 * <p>With a home that answers at once (one store in flight: the master's own data store) every append
 * lands before it returns, with no future or boxing per block. The slots are made on first use and
 * reused: no allocation per block here (the home copies what it sends). Session lane only.
 */
final class StoreWindow {
    /** What the session does with one block of a store once its PBN is known. */
    interface Landing {
        /** Entry {@code entry} is stored at {@code pbn}; its possession fingerprint is {@code pfs[pfOff..+16)}. */
        void landed(int entry, long pbn, byte[] pfs, int pfOff);
    }

    private final BlockHome home;
    private final Landing landing;
    private final ReferenceGuard guard;
    private final long session;
    private final int capacity;
    // a ring of slots, head the oldest store in flight
    private final CompletableFuture<?>[] pending;
    private final int[][] entries;
    private final byte[][] pfs;
    private final int[] members;
    private int head;
    private int size;
    private int peak;
    private final int[] one = new int[1];
    // landed PBNs not yet protected: at most a BLOCKS frame's worth is flushed at once
    private final long[] landed = new long[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
    private int landedCount;

    /** Appends to {@code home} for session {@code session}, landing through {@code landing}, protecting with {@code guard}. */
    StoreWindow(BlockHome home, Landing landing, ReferenceGuard guard, long session) {
        this.home = home;
        this.landing = landing;
        this.guard = guard;
        this.session = session;
        this.capacity = Math.max(1, home.storesInFlight());
        this.pending = new CompletableFuture<?>[capacity];
        this.entries = new int[capacity][];
        this.pfs = new byte[capacity][];
        this.members = new int[capacity];
    }

    /** Appends entry {@code entry}'s verified block (see {@link BlockHome#append}); it lands now or later. */
    void append(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength, int entry,
                byte[] pf, int pfOff) {
        one[0] = entry;
        if (capacity == 1) {
            land(home.append(worker, fps, fpOff, payload, off, storedLength, codec, rawLength), one, 1, pf, pfOff);
            return;
        }
        awaitRoom();
        add(home.startAppend(worker, fps, fpOff, payload, off, storedLength, codec, rawLength), one, 1, pf, pfOff);
    }

    /** Appends the verified frame of entries {@code frameEntries[0..m)} (see {@link BlockHome#appendFrame}); it lands now or later. */
    void appendFrame(long worker, byte[] fps, int fpOff, int m, byte[] frame, int off, int storedLength, int blockSize, int[] frameEntries,
                     byte[] pf, int pfOff) {
        if (capacity == 1) {
            land(home.appendFrame(worker, fps, fpOff, m, frame, off, storedLength, blockSize), frameEntries, m, pf, pfOff);
            return;
        }
        awaitRoom();
        add(home.startAppendFrame(worker, fps, fpOff, m, frame, off, storedLength, blockSize), frameEntries, m, pf, pfOff);
    }

    /** Lands the stores already answered, oldest first, up to the first one still in flight. */
    void landAnswered() {
        while (size > 0 && pending[head].isDone()) {
            landOldest();
        }
    }

    /** Lands every store, waiting for each, and protects them; throws the first failure (the stores after it stay). */
    void landAll() {
        while (size > 0) {
            landOldest();
        }
        protectLanded();
    }

    /**
     * For a session that ends uncommitted: lands every store that succeeds, waiting for each, drops the
     * failed ones, and protects what landed: a block the guard never saw is one no sweep would ever
     * see, while a protected one with no reference is freed once its grace has passed. Throws nothing.
     */
    void landWhatStored() {
        while (size > 0) {
            try {
                landOldest();
            } catch (RuntimeException e) {
                // already reported by the landing that met it, or the session ends for another reason
            }
        }
        try {
            protectLanded();
        } catch (RuntimeException e) {
            // the guard's worker is gone too: its blocks wait for that worker's own GC, as a lost link's do
        }
    }

    /** Protects the PBNs landed since the last call (one guard call). */
    void protectLanded() {
        if (landedCount > 0) {
            int n = landedCount;
            landedCount = 0;
            guard.protect(session, landed, 0, n);
        }
    }

    /** Stores in flight now. */
    int inFlight() {
        return size;
    }

    /** Most stores this session had in flight at once. */
    int peakInFlight() {
        return peak;
    }

    private void awaitRoom() {
        landAnswered();
        if (size == capacity) {
            landOldest();
        }
    }

    private void add(CompletableFuture<Long> pbn, int[] frameEntries, int m, byte[] pf, int pfOff) {
        int slot = (head + size) % capacity;
        if (entries[slot] == null) {
            entries[slot] = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
            pfs[slot] = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME * PossessionProof.PF_BYTES];
        }
        System.arraycopy(frameEntries, 0, entries[slot], 0, m);
        System.arraycopy(pf, pfOff, pfs[slot], 0, m * PossessionProof.PF_BYTES);
        members[slot] = m;
        pending[slot] = pbn;
        size++;
        peak = Math.max(peak, size);
    }

    @SuppressWarnings("unchecked")
    private void landOldest() {
        int slot = head;
        CompletableFuture<Long> f = (CompletableFuture<Long>) pending[slot];
        pending[slot] = null;
        head = (head + 1) % capacity;
        size--;
        long first;
        try {
            first = f.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
        land(first, entries[slot], members[slot], pfs[slot], 0);
    }

    private void land(long first, int[] frameEntries, int m, byte[] pf, int pfOff) {
        if (landedCount + m > landed.length) {
            protectLanded();
        }
        for (int k = 0; k < m; k++) {
            landing.landed(frameEntries[k], first + k, pf, pfOff + k * PossessionProof.PF_BYTES);
            landed[landedCount++] = first + k;
        }
    }
}
