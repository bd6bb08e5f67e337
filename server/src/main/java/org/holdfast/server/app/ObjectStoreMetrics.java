package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToLongFunction;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.LogCache;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Conditional;
import org.springframework.stereotype.Component;

/** Backend s3: object-store requests and bytes (stores bill per request), retries, logs uploaded and fetched back, and the local cache. */
@Component
@Conditional(OnStandaloneOrMaster.class)
@ConditionalOnProperty(name = "holdfast.store.backend", havingValue = "s3")
public class ObjectStoreMetrics implements MeterBinder {
    private final LogArchive archive;

    public ObjectStoreMetrics(LogArchive archive) {
        this.archive = archive;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        request(r, "put", a -> a.stats().requests().puts());
        request(r, "get", a -> a.stats().requests().gets());
        request(r, "delete", a -> a.stats().requests().deletes());
        request(r, "head", a -> a.stats().requests().heads());
        request(r, "list", a -> a.stats().requests().lists());
        FunctionCounter.builder("holdfast.objects.bytes", archive, a -> a.stats().requests().putBytes()).tag("direction", "put")
                .baseUnit("bytes").description("bytes uploaded to the object store").register(r);
        FunctionCounter.builder("holdfast.objects.bytes", archive, a -> a.stats().requests().getBytes()).tag("direction", "get")
                .baseUnit("bytes").description("bytes fetched from the object store").register(r);
        FunctionCounter.builder("holdfast.objects.retries", archive, a -> a.stats().requests().retries())
                .description("object-store requests repeated after a timeout, 5xx or 503 Slow Down").register(r);
        FunctionCounter.builder("holdfast.objects.logs.uploaded", archive, a -> a.stats().logsUploaded())
                .description("sealed data logs uploaded and confirmed").register(r);
        FunctionCounter.builder("holdfast.objects.logs.upload-failures", archive, a -> a.stats().uploadFailures())
                .description("uploads that failed after their retries (tried again at the next sync)").register(r);
        FunctionCounter.builder("holdfast.objects.logs.fetched", archive, a -> a.stats().logsFetched())
                .description("whole data logs downloaded (a compaction's source the cache had evicted; reads go by ranges)").register(r);
        FunctionCounter.builder("holdfast.objects.rate-limited", archive, a -> a.stats().requests().rateLimitedMillis() / 1000.0)
                .baseUnit("seconds").description("time object-store requests waited for the configured request-rate limits").register(r);
        cache(r, "hits", LogCache.Stats::hits, "reads of archived logs served from the local cache (uploaded log files and cached ranges)");
        cache(r, "misses", LogCache.Stats::misses, "reads of archived logs that had to fetch a range from the object store");
        cache(r, "read-ahead-waits", LogCache.Stats::readAheadWaits, "reads that waited for a range read-ahead was fetching");
        cache(r, "range-gets", LogCache.Stats::rangeGets, "ranged GETs made for the cache (on a miss or ahead of a restore)");
        FunctionCounter.builder("holdfast.objects.cache.fetched", archive, a -> cacheStat(a, LogCache.Stats::bytesFetched))
                .baseUnit("bytes").description("bytes fetched into the cache by ranged GETs").register(r);
        cache(r, "evictions", LogCache.Stats::evictions, "uploaded logs and ranges evicted, least recently used first");
        Gauge.builder("holdfast.objects.cache.size", archive, a -> cacheStat(a, LogCache.Stats::cachedBytes)).baseUnit("bytes")
                .description("local bytes the cache holds: uploaded sealed logs and cached ranges").register(r);
        Gauge.builder("holdfast.objects.cache.limit", archive, a -> cacheStat(a, LogCache.Stats::limitBytes)).baseUnit("bytes")
                .description("holdfast.store.s3.cache-size").register(r);
        FunctionCounter.builder("holdfast.objects.deleted", archive, LogArchive::objectsDeleted)
                .description("objects deleted: dead data logs, and old copies of logs compaction rewrote").register(r);
    }

    private void cache(MeterRegistry r, String name, ToLongFunction<LogCache.Stats> f, String description) {
        FunctionCounter.builder("holdfast.objects.cache." + name, archive, a -> cacheStat(a, f)).description(description).register(r);
    }

    private static double cacheStat(LogArchive a, ToLongFunction<LogCache.Stats> f) {
        LogCache c = a.cache();
        return c == null ? 0 : f.applyAsLong(c.stats()); // null until the data store opened
    }

    private void request(MeterRegistry r, String kind, java.util.function.ToDoubleFunction<LogArchive> f) {
        FunctionCounter.builder("holdfast.objects.requests", archive, f).tag("kind", kind)
                .description("object-store requests, every attempt counted").register(r);
    }
}
