package org.holdfast.server.engine;

import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.holdfast.server.container.Container;
import org.holdfast.server.container.ContainerStore;
import org.holdfast.server.store.ExactFallbackMap;

/**
 * The Sungem deduplication engine (thesis chapter 5): ties together the {@link InputSegmenter},
 * the {@link BloomFilterChain}, the {@link SampledFingerprintIndex}, the containers of related
 * stored segments and the {@link StaleMarks} of lazy deletion.
 *
 * <pre>
 *  lookup(segment)                                   record(segment, pbns)
 *    | cut at U_segment                                 | runs matched in lookup: exact -> count,
 *    | SFI probe of level>=2 fps -> container ids       |   stable at T_BSU; tiling -> merge;
 *    | + the stream's recent containers                 |   partial -> sub-segment (K limit splits)
 *    | load containers (cache / buffer / disk, purge)   | misses -> new stored segment beside the
 *    | FI probe + extend: longest exact 32-byte run     |   predecessor, else default container
 *    | drop PBNs marked stale                           | samples of new segments -> SFI
 *    | [fallback: BFC says seen -> exact on-disk map]   | all fps -> current BFC filter
 * </pre>
 *
 * <p>Correctness rests on one rule: a PBN is handed out only for an exact 32-byte match against a
 * container entry (or the exact fallback map) whose PBN is not marked stale. Everything sampled,
 * filtered or cached only decides where to look.
 *
 * <p>Locks: the SFI is behind a read-write lock (read for probes, write for changes); a container
 * behind its own (read for lookups, write for changes, with the read-only fallback when contended).
 * Container locks are taken before the SFI's, never the other way round.
 */
public final class SungemFingerprintIndex implements FingerprintIndex {
    final SungemSettings settings;
    final ContainerStore store;
    final SampledFingerprintIndex sfi;
    final ReentrantReadWriteLock sfiLock = new ReentrantReadWriteLock();
    final BloomFilterChain bfc;
    final StaleMarks stale;
    final ExactFallbackMap fallback;
    final InputSegmenter segmenter;
    final int initialLevel;
    final long lockTimeoutNanos;
    private final AtomicLong stamp = new AtomicLong();
    private final Path sfiSnapshot;

    final LongAdder lookups = new LongAdder();
    final LongAdder hits = new LongAdder();
    final LongAdder recorded = new LongAdder();
    final LongAdder forgotten = new LongAdder();
    final LongAdder sfiHits = new LongAdder();
    final LongAdder containersTouched = new LongAdder();
    final LongAdder containersUseful = new LongAdder();
    final LongAdder readOnlyFallbacks = new LongAdder();
    final LongAdder fallbackProbes = new LongAdder();
    final LongAdder fallbackHits = new LongAdder();
    final LongAdder exactMatches = new LongAdder();
    final LongAdder merges = new LongAdder();
    final LongAdder subSegments = new LongAdder();
    final LongAdder newSegments = new LongAdder();
    final LongAdder stalePbnsDropped = new LongAdder();
    /** PBNs {@link #forgetIfHeld} skipped: their fingerprint was not in the engine's memory. */
    final LongAdder forgetsNotHeld = new LongAdder();
    private final ForgetGate gate;
    /** Nanoseconds inside the streams' lookup and record, summed over sessions (see {@link IndexStats}). */
    final LongAdder busyNanos = new LongAdder();
    private volatile boolean closed;

    /**
     * Opens (or creates) the engine's state under {@code dataDir}: container files in
     * {@code containers/}, the Bloom filter chain, stale marks and exact fallback map in
     * {@code sungem/}. The clock drives the Bloom filter periods.
     */
    public SungemFingerprintIndex(Path dataDir, SungemSettings settings, Clock clock) {
        this.settings = settings;
        this.segmenter = new InputSegmenter(settings.uSegment());
        this.initialLevel = SampledFingerprintIndex.initialLevel(settings.sInit());
        this.lockTimeoutNanos = settings.readOnlyLockTimeout().toNanos();
        Path stateDir = dataDir.resolve("sungem");
        try {
            java.nio.file.Files.createDirectories(stateDir);
        } catch (java.io.IOException e) {
            throw org.holdfast.server.store.StoreException.translate("sungem", stateDir.toString(), null, e);
        }
        this.stale = new StaleMarks(stateDir.resolve("stale.log"));
        this.store = new ContainerStore(dataDir.resolve("containers"), settings.uContainer(), settings.k(),
                settings.containerCacheBytes(), stale);
        this.bfc = new BloomFilterChain(stateDir.resolve("bfc"), clock, settings.bloomPeriod().toMillis(),
                settings.bloomPeriods(), settings.bloomExpectedPerPeriod(), settings.bloomFalsePositiveRate());
        this.sfi = new SampledFingerprintIndex(settings.sfiBytes());
        this.fallback = settings.exactFallback() ? new ExactFallbackMap(stateDir.resolve("exact-fallback")) : null;
        this.sfiSnapshot = stateDir.resolve("sfi.snapshot");
        this.gate = new ForgetGate(bfc, sfi, sfiLock, fallback);
        if (!loadSfiSnapshot()) {
            rebuildSfi();
        }
    }

    /**
     * Loads the SFI written at the last clean shutdown, then deletes the file: after a crash there
     * is none and the SFI is rebuilt from the containers, so a stale snapshot is never used. The
     * file (format in docs/architecture.md, "SFI snapshot") ends with a CRC32C; a torn or foreign
     * one is ignored.
     */
    private boolean loadSfiSnapshot() {
        if (!java.nio.file.Files.exists(sfiSnapshot)) {
            return false;
        }
        boolean loaded = false;
        try (java.util.zip.CheckedInputStream crc = new java.util.zip.CheckedInputStream(
                new java.io.BufferedInputStream(java.nio.file.Files.newInputStream(sfiSnapshot), 1 << 16),
                new java.util.zip.CRC32C());
                java.io.DataInputStream in = new java.io.DataInputStream(crc)) {
            loaded = sfi.readFrom(in);
            long expected = crc.getChecksum().getValue();
            if (loaded && (in.readInt() != (int) expected || in.read() != -1)) {
                loaded = false;
            }
        } catch (java.io.IOException e) {
            loaded = false; // torn: rebuild instead
        }
        if (!loaded) {
            sfi.resetAfterFailedLoad();
        }
        try {
            java.nio.file.Files.delete(sfiSnapshot);
        } catch (java.io.IOException e) {
            throw org.holdfast.server.store.StoreException.translate("sungem-sfi", sfiSnapshot.toString(), null, e);
        }
        return loaded;
    }

    private void writeSfiSnapshot() {
        java.nio.file.Path tmp = sfiSnapshot.resolveSibling("sfi.snapshot.tmp");
        try {
            java.util.zip.CRC32C sum = new java.util.zip.CRC32C();
            try (java.io.OutputStream file = java.nio.file.Files.newOutputStream(tmp);
                    java.util.zip.CheckedOutputStream crc = new java.util.zip.CheckedOutputStream(
                            new java.io.BufferedOutputStream(file, 1 << 16), sum);
                    java.io.DataOutputStream out = new java.io.DataOutputStream(crc)) {
                sfi.writeTo(out);
                out.flush();
                out.writeInt((int) sum.getValue());
            }
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(tmp,
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            java.nio.file.Files.move(tmp, sfiSnapshot, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (java.io.IOException e) {
            throw org.holdfast.server.store.StoreException.translate("sungem-sfi", tmp.toString(), null, e);
        }
    }

    /**
     * Rebuilds the SFI from the container files: every stored segment long enough gets its samples
     * again (stable ones their anchor only), oldest containers first, so the rate-based LRU leaves
     * the newest ones best sampled.
     */
    private void rebuildSfi() {
        store.forEachStoredId(id -> {
            Container c = store.readUncached(id);
            if (c == null) {
                return;
            }
            for (int s = 0; s < c.segmentSlots(); s++) {
                if (c.isLiveSegment(s) && c.segmentEnd(s) - c.segmentStart(s) >= settings.tSummary()) {
                    sfi.addSegment(c, s, c.segmentStart(s), c.segmentEnd(s), initialLevel, c.isStable(s));
                }
            }
        });
    }

    long nextStamp() {
        return stamp.incrementAndGet();
    }

    @Override
    public DedupStream openStream(String volumeName) {
        if (closed) {
            throw new IllegalStateException("the Sungem index is closed");
        }
        return new SungemDedupStream(this);
    }

    @Override
    public void forget(long pbn, byte[] fps, int off) {
        forgetAll(new long[] {pbn}, fps, off, 1);
    }

    /** Forgets {@code count} PBNs at once, their fingerprints packed from {@code off}: one forced write for all. */
    public void forgetAll(long[] pbns, byte[] fps, int off, int count) {
        if (count < 0 || pbns.length < count || fps.length - off < count * 32L) {
            throw new IllegalArgumentException("forget: " + count + " entries do not fit the arrays");
        }
        for (int i = 0; i < count; i++) {
            if (pbns[i] <= 0) {
                throw new IllegalArgumentException("forget: PBN must be positive: " + pbns[i]);
            }
        }
        stale.mark(pbns, count);
        if (fallback != null) {
            for (int i = 0; i < count; i++) {
                fallback.delete(pbns[i], fps, off + i * 32);
            }
        }
        forgotten.add(count);
    }

    @Override
    public void forgetAll(long[] pbns, byte[] fps, int count) {
        forgetAll(pbns, fps, 0, count);
    }

    /**
     * As {@link #forgetAll}, but only the PBNs whose fingerprint the engine may hold by its Bloom
     * filter chain, SFI or exact fallback map ({@link ForgetGate}) are marked; the others cost no
     * stale.log record and no mark, and are counted. Weaker than {@link #forget}: a fingerprint
     * recorded before the chain's window and not sampled is skipped though held, so it is only for
     * PBNs the engine should never have recorded (another cluster worker's range, whose blocks this
     * engine's worker does not store). Returns how many were skipped.
     */
    public int forgetIfHeld(long[] pbns, byte[] fps, int count) {
        if (count < 0 || pbns.length < count || fps.length < count * 32L) {
            throw new IllegalArgumentException("forget: " + count + " entries do not fit the arrays");
        }
        long[] held = new long[count];
        byte[] heldFps = new byte[count * 32];
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (gate.mayHold(pbns[i], fps, i)) {
                held[n] = pbns[i];
                System.arraycopy(fps, i * 32, heldFps, n * 32, 32);
                n++;
            }
        }
        if (n > 0) {
            forgetAll(held, heldFps, 0, n);
        }
        forgetsNotHeld.add(count - n);
        return count - n;
    }

    @Override
    public void flush() {
        store.flush();
        bfc.flush();
        if (fallback != null) {
            fallback.flush();
        }
        if (stale.size() > 0) {
            // Purge a few of the containers that still may hold freed PBNs, then retire the marks
            // that no container can hold any more.
            store.sweepStale(16);
            stale.retireThrough(store.minPurgedSeq());
        }
    }

    @Override
    public IndexStats stats() {
        return new IndexStats(lookups.sum(), hits.sum(), recorded.sum(), forgotten.sum(), sfiHits.sum(), store.loads(),
                memoryBytes(), busyNanos.sum());
    }

    /** Engine-specific figures for metrics and the benchmark. */
    public SungemStats sungemStats() {
        long sfiMem;
        int entries;
        int records;
        long down;
        long evict;
        long stab;
        sfiLock.readLock().lock();
        try {
            sfiMem = sfi.memoryBytes();
            entries = sfi.entries();
            records = sfi.records();
            down = sfi.downsamples();
            evict = sfi.evictions();
            stab = sfi.stabilized();
        } finally {
            sfiLock.readLock().unlock();
        }
        return new SungemStats(entries, sfi.capacity(), records, down, evict, stab, containersTouched.sum(),
                containersUseful.sum(), store.loads(), store.absent(), store.writes(), store.evictions(),
                store.cachedContainers(), store.containerCount(), readOnlyFallbacks.sum(), exactMatches.sum(),
                merges.sum(), subSegments.sum(), newSegments.sum(), fallbackProbes.sum(), fallbackHits.sum(),
                stale.size(), stalePbnsDropped.sum(), bfc.fill(), bfc.falsePositiveRate(), bfc.liveFilters(), sfiMem,
                bfc.memoryBytes(), store.cachedBytes(), store.bufferBytes(), stale.memoryBytes(), forgetsNotHeld.sum());
    }

    /** The settings in force. */
    public SungemSettings settings() {
        return settings;
    }

    private long memoryBytes() {
        return sfi.memoryBytes() + bfc.memoryBytes() + store.cachedBytes() + store.bufferBytes() + stale.memoryBytes();
    }

    /** The container store (tests and diagnostics). */
    public ContainerStore containerStore() {
        return store;
    }

    /** The SFI; callers hold {@link #sfiLock()} (tests and diagnostics). */
    SampledFingerprintIndex sfi() {
        return sfi;
    }

    ReentrantReadWriteLock sfiLock() {
        return sfiLock;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            store.close();
            bfc.close();
            sfiLock.writeLock().lock();
            try {
                writeSfiSnapshot();
            } finally {
                sfiLock.writeLock().unlock();
            }
        } finally {
            if (fallback != null) {
                fallback.close();
            }
            stale.close();
        }
    }
}
