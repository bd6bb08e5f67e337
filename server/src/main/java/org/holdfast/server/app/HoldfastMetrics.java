package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.store.DataStore;
import org.springframework.stereotype.Component;

/** Publishes the core's counters to Micrometer (Prometheus at /actuator/prometheus). */
@Component
public class HoldfastMetrics implements MeterBinder {
    private final DataStore store;
    private final IngestServer ingest;
    private final FingerprintIndex index;

    public HoldfastMetrics(DataStore store, IngestServer ingest, FingerprintIndex index) {
        this.store = store;
        this.ingest = ingest;
        this.index = index;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        Gauge.builder("holdfast.store.blocks.appended", store, s -> s.stats().appendedBlocks()).register(r);
        Gauge.builder("holdfast.store.bytes.appended", store, s -> s.stats().appendedBytes()).baseUnit("bytes").register(r);
        Gauge.builder("holdfast.store.next.pbn", store, s -> s.stats().nextPbn()).register(r);
        Gauge.builder("holdfast.store.syncs", store, s -> s.stats().syncs()).register(r);
        FunctionCounter.builder("holdfast.store.regions.read", store, DataStore::regionsRead)
                .description("data-log regions read (one positional read each) for restores and block reads").register(r);
        Gauge.builder("holdfast.ingest.connections", ingest, i -> i.stats().connections()).register(r);
        Gauge.builder("holdfast.ingest.sessions", ingest, i -> i.stats().sessions()).register(r);
        Gauge.builder("holdfast.ingest.commits", ingest, i -> i.stats().commits()).register(r);
        Gauge.builder("holdfast.ingest.errors", ingest, i -> i.stats().errors()).register(r);
        Gauge.builder("holdfast.index.lookups", index, i -> i.stats().lookups()).register(r);
        Gauge.builder("holdfast.index.hits", index, i -> i.stats().hits()).register(r);
        Gauge.builder("holdfast.index.recorded", index, i -> i.stats().recorded()).register(r);
    }
}
