package org.holdfast.server.store.object;

/**
 * Requests made to an object store and the bytes they moved, since it was opened; every attempt is
 * a request (stores bill them), {@code retries} counts the repeated ones, and {@code rateLimitedMillis}
 * the time requests waited for the configured request-rate limits.
 */
public record ObjectStoreStats(long puts, long putBytes, long gets, long getBytes, long deletes, long heads, long lists,
        long retries, long rateLimitedMillis) {
}
