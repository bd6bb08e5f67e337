package org.holdfast.server.engine;

import java.util.concurrent.CompletableFuture;

/**
 * A {@link DedupWorker} that passes every call on to {@code delegate}: a test overrides only the calls
 * it slows, gates or races, and {@link #close()} (which closes the delegate here) when the test
 * closes the engine itself.
 */
public class ForwardingDedupWorker implements DedupWorker {
    protected final DedupWorker delegate;

    public ForwardingDedupWorker(DedupWorker delegate) {
        this.delegate = delegate;
    }

    @Override
    public int id() {
        return delegate.id();
    }

    @Override
    public long memberId() {
        return delegate.memberId();
    }

    @Override
    public CompletableFuture<SegmentAnswer> lookup(SegmentLookup request) {
        return delegate.lookup(request);
    }

    @Override
    public CompletableFuture<ProbeAnswer> probe(SegmentProbe request) {
        return delegate.probe(request);
    }

    @Override
    public CompletableFuture<Void> record(SegmentRecord request) {
        return delegate.record(request);
    }

    @Override
    public void forget(long[] pbns, byte[] fps, int count) {
        delegate.forget(pbns, fps, count);
    }

    @Override
    public void closeStream(long stream) {
        delegate.closeStream(stream);
    }

    @Override
    public void flush() {
        delegate.flush();
    }

    @Override
    public DedupLoad load() {
        return delegate.load();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
