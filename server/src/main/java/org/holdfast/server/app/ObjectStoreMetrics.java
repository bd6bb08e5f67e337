package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.store.LogArchive;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/** Backend s3: object-store requests and bytes (stores bill per request), retries, and logs uploaded and fetched back. */
@Component
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
                .description("data logs fetched back because their local file was missing").register(r);
        FunctionCounter.builder("holdfast.objects.deleted", archive, LogArchive::objectsDeleted)
                .description("objects deleted: dead data logs, and old copies of logs compaction rewrote").register(r);
    }

    private void request(MeterRegistry r, String kind, java.util.function.ToDoubleFunction<LogArchive> f) {
        FunctionCounter.builder("holdfast.objects.requests", archive, f).tag("kind", kind)
                .description("object-store requests, every attempt counted").register(r);
    }
}
