package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;
import org.holdfast.server.engine.ClusterFingerprintIndex;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.ShadowedFingerprintIndex;
import org.holdfast.server.engine.SungemFingerprintIndex;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.engine.SungemStats;

/**
 * Micrometer meters of the dedup engine under {@code holdfast.dedup.*}. For either engine:
 * fingerprints looked up, duplicates found, and the engine's busy time (fingerprints over it is
 * the engine's own fingerprints/s). For Sungem also SFI hits and occupancy, containers loaded and
 * the useful share, Bloom filter fill and estimated false-positive rate, memory per structure, the
 * eight parameters, and in shadow mode the measured efficiency. For the master/worker engine
 * (preview) containers loaded over all workers and per-worker figures. Sungem figures are sampled at most
 * once a second, because computing the Bloom fill scans the filters.
 */
public final class DedupEngineMetrics implements MeterBinder {
    private final FingerprintIndex index;
    private final SungemFingerprintIndex sungem;
    private final ClusterFingerprintIndex cluster;
    private final ShadowedFingerprintIndex shadow;
    private volatile SungemStats cached;
    private volatile long cachedAt;

    /** Meters for {@code index} (Sungem, possibly in shadow mode, or exact). */
    public DedupEngineMetrics(FingerprintIndex index) {
        this.index = index;
        this.shadow = index instanceof ShadowedFingerprintIndex s ? s : null;
        FingerprintIndex p = shadow != null ? shadow.primary() : index;
        this.sungem = p instanceof SungemFingerprintIndex s ? s : null;
        this.cluster = p instanceof ClusterFingerprintIndex c ? c : null;
    }

    private SungemStats stats() {
        long now = System.nanoTime();
        SungemStats s = cached;
        if (s == null || now - cachedAt > 1_000_000_000L) {
            s = sungem.sungemStats();
            cached = s;
            cachedAt = now;
        }
        return s;
    }

    private void gauge(MeterRegistry r, String name, String unit, String description, ToDoubleFunction<SungemStats> f) {
        Gauge.Builder<DedupEngineMetrics> b = Gauge.builder(name, this, m -> f.applyAsDouble(m.stats())).description(description);
        if (unit != null) {
            b.baseUnit(unit);
        }
        b.register(r);
    }

    private void counter(MeterRegistry r, String name, String description, ToDoubleFunction<SungemStats> f) {
        FunctionCounter.builder(name, this, m -> f.applyAsDouble(m.stats())).description(description).register(r);
    }

    @Override
    public void bindTo(MeterRegistry r) {
        FunctionCounter.builder("holdfast.dedup.fingerprints", index, i -> i.stats().lookups())
                .description("fingerprints looked up; its rate is the engine's fingerprints/s").register(r);
        FunctionCounter.builder("holdfast.dedup.duplicates", index, i -> i.stats().hits())
                .description("fingerprints found to be duplicates of stored blocks").register(r);
        // Wall time per segment call, summed over the sessions running at once: with several
        // backups in parallel it grows faster than the clock, like CPU time.
        FunctionCounter.builder("holdfast.dedup.engine.seconds", index, i -> i.stats().busyNanos() / 1e9)
                .baseUnit("seconds")
                .description("time the engine spent deduplicating (lookup and record of input segments), summed over"
                        + " ingest threads; fingerprints / this = the engine's fingerprints/s per busy thread")
                .register(r);
        if (shadow != null) {
            Gauge.builder("holdfast.dedup.efficiency", shadow, ShadowedFingerprintIndex::efficiency)
                    .description("duplicates found / duplicates the exact shadow index finds").register(r);
            FunctionCounter.builder("holdfast.dedup.shadow.duplicates", shadow,
                    ShadowedFingerprintIndex::shadowDuplicates).description("duplicates the exact shadow index finds").register(r);
        }
        if (cluster != null) {
            bindCluster(r);
        }
        if (sungem == null) {
            return;
        }
        FunctionCounter.builder("holdfast.dedup.sfi.hits", sungem, i -> i.stats().sfiHits())
                .description("input fingerprints that were SFI samples").register(r);
        gauge(r, "holdfast.dedup.sfi.entries", null, "samples in the sampled fingerprint index (SFI)", SungemStats::sfiEntries);
        gauge(r, "holdfast.dedup.sfi.capacity", null, "samples the SFI holds at most", SungemStats::sfiCapacity);
        gauge(r, "holdfast.dedup.sfi.segments", null, "stored segments that have samples in the SFI", SungemStats::sfiRecords);
        counter(r, "holdfast.dedup.sfi.downsamples", "times the SFI halved its sampling rate to make room", SungemStats::sfiDownsamples);
        counter(r, "holdfast.dedup.sfi.evictions", "SFI entries evicted", SungemStats::sfiEvictions);
        counter(r, "holdfast.dedup.containers.loaded", "containers read from disk for matching", SungemStats::containersLoaded);
        counter(r, "holdfast.dedup.containers.searched", "containers searched for matches", SungemStats::containersTouched);
        gauge(r, "holdfast.dedup.containers.useful.share", null, "share of loaded containers that gave at least one match", SungemStats::usefulContainerShare);
        gauge(r, "holdfast.dedup.containers.cached", null, "containers in the container cache", SungemStats::containersCached);
        gauge(r, "holdfast.dedup.containers.created", null, "containers written", SungemStats::containersCreated);
        counter(r, "holdfast.dedup.containers.absent", "containers named by the index that no longer exist", SungemStats::containersAbsent);
        counter(r, "holdfast.dedup.containers.read.only", "times a contended container was used read-only", SungemStats::readOnlyFallbacks);
        counter(r, "holdfast.dedup.fallback.hits", "duplicates found by the exact fallback map", SungemStats::fallbackHits);
        gauge(r, "holdfast.dedup.stale.marks", null, "fingerprints marked stale (their block was freed)", SungemStats::staleMarks);
        gauge(r, "holdfast.dedup.bloom.fill", null, "fill of the newest Bloom filter (share of bits set)", SungemStats::bloomFill);
        gauge(r, "holdfast.dedup.bloom.false.positive.rate", null, "estimated false-positive rate of the Bloom filter chain", SungemStats::bloomFalsePositiveRate);
        gauge(r, "holdfast.dedup.bloom.filters", null, "Bloom filters in the chain", SungemStats::bloomFilters);
        memory(r, "sfi", SungemStats::sfiBytes);
        memory(r, "bloom-filter-chain", SungemStats::bloomBytes);
        memory(r, "container-cache", SungemStats::containerCacheBytes);
        memory(r, "container-buffer", SungemStats::containerBufferBytes);
        memory(r, "stale-marks", SungemStats::staleMarkBytes);
        SungemSettings s = sungem.settings();
        parameter(r, "U_segment", s.uSegment());
        parameter(r, "K", s.k());
        parameter(r, "T_BSU", s.tBsu());
        parameter(r, "S_SFI", s.sfiBytes());
        parameter(r, "S_init", s.sInit());
        parameter(r, "S_container", s.containerCacheBytes());
        parameter(r, "T_summary", s.tSummary());
        parameter(r, "U_container", s.uContainer());
    }

    /**
     * The master/worker engine: containers loaded over all workers (the name Sungem uses), and per
     * worker (tag {@code worker}) its stored fingerprints, lookups, containers loaded and busy time.
     */
    private void bindCluster(MeterRegistry r) {
        FunctionCounter.builder("holdfast.dedup.containers.loaded", cluster, c -> c.stats().containersLoaded())
                .description("containers read from disk for matching, over all workers").register(r);
        for (int w = 0; w < cluster.workers().size(); w++) {
            DedupWorker worker = cluster.workers().get(w);
            String tag = Integer.toString(w);
            Gauge.builder("holdfast.dedup.cluster.worker.stored", worker, x -> x.load().storedEntries()).tag("worker", tag)
                    .description("fingerprints stored in the worker's containers (the load new data is balanced by)").register(r);
            FunctionCounter.builder("holdfast.dedup.cluster.worker.lookups", worker, x -> x.load().lookups()).tag("worker", tag)
                    .description("fingerprints the worker looked up (in nearest mode every worker sees every segment)").register(r);
            FunctionCounter.builder("holdfast.dedup.cluster.worker.containers.loaded", worker, x -> x.load().containersLoaded())
                    .tag("worker", tag).description("containers the worker read from disk").register(r);
            FunctionCounter.builder("holdfast.dedup.cluster.worker.seconds", worker, x -> x.load().busyNanos() / 1e9)
                    .tag("worker", tag).baseUnit("seconds").description("time the worker spent in lookup and record").register(r);
        }
    }

    private void memory(MeterRegistry r, String structure, ToDoubleFunction<SungemStats> f) {
        Gauge.builder("holdfast.dedup.memory", this, m -> f.applyAsDouble(m.stats())).tag("structure", structure)
                .baseUnit("bytes").description("memory of one dedup engine structure").register(r);
    }

    private static void parameter(MeterRegistry r, String name, double value) {
        Gauge.builder("holdfast.dedup.parameter", () -> value).tag("name", name)
                .description("a Sungem parameter's configured value").register(r);
    }
}
