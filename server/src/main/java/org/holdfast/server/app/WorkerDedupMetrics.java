package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;
import org.holdfast.server.engine.DedupLoad;
import org.holdfast.server.engine.LazyDedupWorker;

/**
 * Micrometer meters of the engine a worker process serves its master's dedup calls with, under
 * {@code holdfast.dedup.worker.*}: fingerprints looked up, SFI hits, containers loaded, busy time
 * and stored fingerprints, and the PBNs the master's GC had it forget (and of those, the ones it
 * skipped: forwarded stale marks of fingerprints it does not hold). All 0 until the master's
 * first call opens the engine. (A worker opens no other engine, so it has no other
 * {@code holdfast.dedup.*} meters.)
 */
public final class WorkerDedupMetrics implements MeterBinder {
    private final LazyDedupWorker worker;

    public WorkerDedupMetrics(LazyDedupWorker worker) {
        this.worker = worker;
    }

    private double read(ToDoubleFunction<DedupLoad> f) {
        DedupLoad l = worker.loadIfOpen();
        return l == null ? 0 : f.applyAsDouble(l);
    }

    private void counter(MeterRegistry r, String name, String description, ToDoubleFunction<DedupLoad> f) {
        FunctionCounter.builder(name, this, m -> m.read(f)).description(description).register(r);
    }

    @Override
    public void bindTo(MeterRegistry r) {
        counter(r, "holdfast.dedup.worker.lookups", "fingerprints this worker looked up for its master", DedupLoad::lookups);
        counter(r, "holdfast.dedup.worker.sfi.hits", "looked-up fingerprints that were SFI samples", DedupLoad::sfiHits);
        counter(r, "holdfast.dedup.worker.containers.loaded", "containers this worker read from disk for matching",
                DedupLoad::containersLoaded);
        FunctionCounter.builder("holdfast.dedup.worker.seconds", this, m -> m.read(DedupLoad::busyNanos) / 1e9).baseUnit("seconds")
                .description("time this worker's engine spent in lookup and record").register(r);
        FunctionCounter.builder("holdfast.dedup.worker.forgotten", worker, LazyDedupWorker::forgotten)
                .description("PBNs the master's GC freed and this worker's index forgot").register(r);
        FunctionCounter.builder("holdfast.dedup.worker.forgets.skipped", worker, LazyDedupWorker::forgetsSkipped)
                .description("of those, PBNs of other workers' ranges skipped: the index cannot hold their fingerprints").register(r);
        Gauge.builder("holdfast.dedup.worker.stored", this, m -> m.read(DedupLoad::storedEntries))
                .description("fingerprints stored in this worker's containers").register(r);
    }
}
