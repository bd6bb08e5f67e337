package org.holdfast.server.engine;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A {@link DedupWorker} that opens its engine on the first call: a worker process whose master does
 * not use distributed dedup never spends the engine's memory (SFI, Bloom chain, container cache).
 */
public final class LazyDedupWorker implements DedupWorker {
    private final int id;
    private final Supplier<? extends DedupWorker> opener;
    private DedupWorker engine; // guarded by this
    private boolean closed; // guarded by this

    public LazyDedupWorker(int id, Supplier<? extends DedupWorker> opener) {
        this.id = id;
        this.opener = opener;
    }

    private synchronized DedupWorker engine() {
        if (closed) {
            throw new IllegalStateException("the dedup worker is closed");
        }
        if (engine == null) {
            engine = opener.get();
        }
        return engine;
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public CompletableFuture<SegmentAnswer> lookup(SegmentLookup request) {
        return engine().lookup(request);
    }

    @Override
    public CompletableFuture<Void> record(SegmentRecord request) {
        return engine().record(request);
    }

    @Override
    public void forget(long[] pbns, byte[] fps, int count) {
        engine().forget(pbns, fps, count);
    }

    @Override
    public void closeStream(long stream) {
        engine().closeStream(stream);
    }

    @Override
    public void flush() {
        engine().flush();
    }

    @Override
    public DedupLoad load() {
        return engine().load();
    }

    /** Whether the engine was opened (tests, diagnostics). */
    public synchronized boolean isOpen() {
        return engine != null && !closed;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (engine != null) {
            engine.close();
        }
    }
}
