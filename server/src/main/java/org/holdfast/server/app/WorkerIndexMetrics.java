package org.holdfast.server.app;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.holdfast.server.ingest.cluster.DedupLinks;
import org.holdfast.server.ingest.cluster.IndexReport;

/**
 * A master's {@code holdfast.cluster.worker.index.entries{worker}}: the fingerprints each worker's
 * dedup index held at its last dedup answer (NaN until it answered one after registering). A gauge
 * appears when its worker first registers with this master.
 */
public final class WorkerIndexMetrics implements MeterBinder {
    private final DedupLinks links;

    public WorkerIndexMetrics(DedupLinks links) {
        this.links = links;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        // workers with a gauge in r: Micrometer logs a WARN when a gauge is registered twice (a worker's every reconnect)
        Set<Long> gauged = ConcurrentHashMap.newKeySet();
        links.onRegistered(id -> {
            if (gauged.add(id)) {
                Gauge.builder("holdfast.cluster.worker.index.entries", links, l -> entries(l, id))
                        .tag("worker", Long.toString(id))
                        .description("fingerprints the worker's dedup index held at its last answer to this master (NaN until reported)")
                        .register(r);
            }
        });
    }

    private static double entries(DedupLinks links, long workerId) {
        IndexReport report = links.indexReport(workerId);
        return report == null ? Double.NaN : report.entries();
    }
}
