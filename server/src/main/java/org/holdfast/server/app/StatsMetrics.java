package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;
import org.holdfast.server.stats.Statistics;
import org.holdfast.server.stats.StatsReport;
import org.holdfast.server.stats.TransferRates;
import org.springframework.context.annotation.Conditional;
import org.springframework.stereotype.Component;

/**
 * Publishes the statistics of {@code GET /api/v1/stats} as gauges: stored, logical and reclaimable
 * bytes and the ratios, from the latest report (made every {@code holdfast.stats.survey-interval}
 * and by each REST call; a scrape never walks the store, and before the first report they read
 * NaN); and the bytes backed up and restored as counters.
 */
@Component
@Conditional(OnStandaloneOrMaster.class)
public class StatsMetrics implements MeterBinder {
    private final Statistics statistics;

    public StatsMetrics(Statistics statistics) {
        this.statistics = statistics;
    }

    private void gauge(MeterRegistry r, String name, String unit, String description, ToDoubleFunction<StatsReport> f) {
        Gauge.Builder<Statistics> b = Gauge.builder(name, statistics, s -> {
            StatsReport last = s.lastReport();
            return last == null ? Double.NaN : f.applyAsDouble(last);
        }).description(description);
        if (unit != null) {
            b.baseUnit(unit);
        }
        b.register(r);
    }

    @Override
    public void bindTo(MeterRegistry r) {
        gauge(r, "holdfast.stored", "bytes", "stored (compressed) payload bytes of every live block", x -> x.stored().payloadBytes());
        gauge(r, "holdfast.data.logs", "bytes", "size of the data logs on disk (live and dead records)", x -> x.stored().dataLogBytes());
        gauge(r, "holdfast.logical", "bytes", "logical bytes protected: the sum of every retained snapshot's size",
                x -> x.logical().logicalBytes());
        gauge(r, "holdfast.logical.newest", "bytes", "logical bytes of each volume's newest snapshot, summed",
                x -> x.logical().newestLogicalBytes());
        gauge(r, "holdfast.dedup.ratio", null, "logical bytes / raw bytes of the live blocks", StatsReport::dedupRatio);
        gauge(r, "holdfast.compression.ratio", null, "raw / stored bytes of the blocks the retained snapshots added",
                StatsReport::compressionRatio);
        gauge(r, "holdfast.reclaimable", "bytes", "bytes the next GC run gives back: expired blocks and dead records of the logs it compacts",
                x -> x.reclaimable().nowBytes());
        gauge(r, "holdfast.snapshots", null, "retained snapshots", x -> x.logical().snapshots());
        FunctionCounter.builder("holdfast.transfer.ingested", statistics, s -> s.rates().total(TransferRates.Direction.INGEST))
                .baseUnit("bytes").description("block payload bytes received from agents since start").register(r);
        FunctionCounter.builder("holdfast.transfer.restored", statistics, s -> s.rates().total(TransferRates.Direction.RESTORE))
                .baseUnit("bytes").description("logical bytes sent in restores since start").register(r);
    }
}
