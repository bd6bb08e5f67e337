package org.holdfast.server.ingest.cluster;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The order of a master's sealed-log recording across each worker's links: a report is recorded after
 * every report of the same worker taken before it, whichever link sent it, and only while its link is
 * the worker's newest. A newer link's first report is full; an older link's report recorded after it
 * would put back a compacted log's deleted object and drop the record of a log uploaded since, and a
 * copy or takeover of the range would then refuse or miss that log's blocks. Thread-safe.
 */
final class SealedLogOrder {
    private static final CompletableFuture<Void> NONE = CompletableFuture.completedFuture(null);
    private final Map<Long, Long> newest = new HashMap<>(); // worker id -> its newest link's number
    private final Map<Long, CompletableFuture<Void>> tails = new HashMap<>(); // worker id -> its last report's recording
    private long links;

    /** A new link of worker {@code worker} (its registration): reports of its older links are no longer recorded. Its number. */
    synchronized long linked(long worker) {
        newest.put(worker, ++links);
        return links;
    }

    /** True while link {@code link} is worker {@code worker}'s newest. */
    synchronized boolean isNewest(long worker, long link) {
        Long n = newest.get(worker);
        return n != null && n == link;
    }

    /** Runs {@code task} on {@code executor} once worker {@code worker}'s previous one ended, failed or not. */
    synchronized CompletableFuture<Void> then(long worker, Runnable task, Executor executor) {
        CompletableFuture<Void> next = tails.getOrDefault(worker, NONE).handle((v, e) -> null).thenRunAsync(task, executor);
        tails.put(worker, next); // one per worker id: bounded by the workers
        return next;
    }
}
