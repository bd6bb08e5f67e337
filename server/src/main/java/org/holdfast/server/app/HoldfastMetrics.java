package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.store.DataStore;
import org.springframework.context.annotation.Conditional;
import org.springframework.stereotype.Component;

/** Publishes the core's counters to Micrometer (Prometheus at /actuator/prometheus). */
@Component
@Conditional(OnStandaloneOrMaster.class)
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
        FunctionCounter.builder("holdfast.store.blocks.appended", store, s -> s.stats().appendedBlocks())
                .description("blocks appended to the data logs since start").register(r);
        FunctionCounter.builder("holdfast.store.bytes.appended", store, s -> s.stats().appendedBytes()).baseUnit("bytes")
                .description("record bytes appended to the data logs since start").register(r);
        Gauge.builder("holdfast.store.next.pbn", store, s -> s.stats().nextPbn())
                .description("the next physical block number the store hands out").register(r);
        FunctionCounter.builder("holdfast.store.syncs", store, s -> s.stats().syncs())
                .description("fsyncs of the data logs since start").register(r);
        FunctionCounter.builder("holdfast.store.regions.read", store, DataStore::regionsRead)
                .description("data-log regions read (one positional read each) for restores and block reads").register(r);
        FunctionCounter.builder("holdfast.ingest.connections", ingest, i -> i.stats().connections())
                .description("agent connections accepted by the ingest port since start").register(r);
        FunctionCounter.builder("holdfast.ingest.sessions", ingest, i -> i.stats().sessions())
                .description("backup sessions begun since start").register(r);
        FunctionCounter.builder("holdfast.ingest.commits", ingest, i -> i.stats().commits())
                .description("backups committed as snapshots since start").register(r);
        FunctionCounter.builder("holdfast.ingest.errors", ingest, i -> i.stats().errors())
                .description("agent connections ended by an error since start").register(r);
        FunctionCounter.builder("holdfast.index.lookups", index, i -> i.stats().lookups())
                .description("fingerprint index lookups since start").register(r);
        FunctionCounter.builder("holdfast.index.hits", index, i -> i.stats().hits())
                .description("fingerprint index lookups that found a stored block since start").register(r);
        FunctionCounter.builder("holdfast.index.recorded", index, i -> i.stats().recorded())
                .description("fingerprints recorded in the index since start").register(r);
        Gauge.builder("holdfast.ingest.inflight.bytes", ingest, IngestServer::inflightBytes).baseUnit("bytes")
                .description("agent-port bytes in flight now: frames being received (reserved whole) or waiting for a session lane").register(r);
        Gauge.builder("holdfast.ingest.open.connections", ingest, IngestServer::openConnections)
                .description("agent connections open now").register(r);
        FunctionCounter.builder("holdfast.ingest.limited", ingest, i -> i.stats().limited())
                .description("agent connections closed by a resource limit since start (connection maximums, before-HELLO limit, slow frames)").register(r);
    }
}
