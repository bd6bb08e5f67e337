package org.holdfast.server.engine;

import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link DedupWorker} with its own {@link SungemFingerprintIndex} in its own directory, one
 * {@link SungemDedupStream} per master stream: in the master's process (in-process workers), or in a
 * worker process behind its link to the master (remote workers). We own the engine and close it.
 *
 * <p>Lookup is the standalone lookup (SFI probe, containers, extension of matches, the stream's
 * recent containers as pseudo-hit anchors) plus the run length of each hit. Record hands the
 * standalone record the entries this worker holds: runs it resolved (where the master kept its
 * answer) are verified and learnt; entries with a PBN outside them are the misses the master routed
 * here, stored beside the run before them (thesis 7.2.2's nearest fingerprint) or in the stream's
 * default container; entries of other workers carry PBN 0 and are skipped. Probe (the first phase
 * of a two-phase broadcast) is {@link SungemDedupStream#probe}.
 */
public final class LocalDedupWorker implements DedupWorker {
    private final int id;
    private final SungemFingerprintIndex engine;
    private final ConcurrentHashMap<Long, SungemDedupStream> streams = new ConcurrentHashMap<>();
    private final LongAdder storedEntries = new LongAdder();

    /** Opens (or creates) worker {@code id}'s engine under {@code dir}. */
    public LocalDedupWorker(int id, Path dir, SungemSettings settings, Clock clock) {
        this.id = id;
        this.engine = new SungemFingerprintIndex(dir, settings, clock);
        // After a restart: estimated from the containers it has (each about half full when replaced).
        storedEntries.add(engine.containerStore().containerCount() * (long) settings.uContainer() / 2);
    }

    @Override
    public int id() {
        return id;
    }

    private SungemDedupStream stream(long stream) {
        return streams.computeIfAbsent(stream, s -> (SungemDedupStream) engine.openStream("cluster-stream-" + s));
    }

    @Override
    public CompletableFuture<SegmentAnswer> lookup(SegmentLookup request) {
        int n = request.count();
        long[] pbns = new long[n];
        int[] runs = new int[n];
        SungemDedupStream s = stream(request.stream());
        s.lookup(request.fps(), n, pbns);
        s.lastRunLengths(n, runs);
        return CompletableFuture.completedFuture(new SegmentAnswer(id, n, pbns, runs, load()));
    }

    @Override
    public CompletableFuture<ProbeAnswer> probe(SegmentProbe request) {
        int found = stream(request.stream()).probe(request.words(), request.sampleCount(), request.key(), request.count());
        return CompletableFuture.completedFuture(new ProbeAnswer(id, found, load()));
    }

    @Override
    public CompletableFuture<Void> record(SegmentRecord request) {
        stream(request.stream()).record(request.fps(), request.count(), request.pbns(), request.isNew());
        storedEntries.add(request.placed());
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void forget(long[] pbns, byte[] fps, int count) {
        engine.forgetAll(pbns, fps, count);
    }

    @Override
    public int forgetIfHeld(long[] pbns, byte[] fps, int count) {
        return engine.forgetIfHeld(pbns, fps, count);
    }

    @Override
    public void closeStream(long stream) {
        SungemDedupStream s = streams.remove(stream);
        if (s != null) {
            s.close();
        }
    }

    @Override
    public void flush() {
        engine.flush();
    }

    @Override
    public DedupLoad load() {
        IndexStats st = engine.stats();
        return new DedupLoad(id, storedEntries.sum(), engine.containerStore().containerCount(), st.lookups(),
                st.sfiHits(), st.containersLoaded(), st.busyNanos(), st.memoryBytes());
    }

    /** The worker's engine (figures for metrics, tests). */
    public SungemFingerprintIndex engine() {
        return engine;
    }

    @Override
    public void close() {
        streams.clear();
        engine.close();
    }
}
