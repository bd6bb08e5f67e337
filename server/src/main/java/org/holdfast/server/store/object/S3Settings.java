package org.holdfast.server.store.object;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Where and how to reach an S3-compatible store. {@code credentialsFile} (properties
 * {@code access-key} and {@code secret-key}) may be null: the SDK's default chain (the environment,
 * {@code AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY}) is used. {@code checksumsWhenRequired}
 * sets the SDK's request checksum calculation and response validation to WHEN_REQUIRED, which Ceph
 * RGW and Garage need.
 */
public record S3Settings(URI endpoint, String region, String bucket, String prefix, Path credentialsFile, boolean pathStyle,
        boolean checksumsWhenRequired, int maxAttempts, Duration firstBackoff, Duration requestTimeout) {

    public S3Settings {
        if (bucket == null || bucket.isBlank()) {
            throw new IllegalArgumentException("holdfast.store.s3.bucket must name a bucket when holdfast.store.backend=s3");
        }
        if (region == null || region.isBlank()) {
            region = "us-east-1";
        }
        prefix = prefix == null ? "" : prefix;
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
    }

    /** Settings with the defaults for the retries: 6 attempts, backoff from 200 ms, 60 s per request. */
    public static S3Settings of(URI endpoint, String region, String bucket, String prefix, Path credentialsFile, boolean pathStyle) {
        return new S3Settings(endpoint, region, bucket, prefix, credentialsFile, pathStyle, true, 6, Duration.ofMillis(200),
                Duration.ofSeconds(60));
    }

    /** The same with the SDK's checksums on every request ({@code false}) or only where an operation needs them. */
    public S3Settings withChecksumsWhenRequired(boolean whenRequired) {
        return new S3Settings(endpoint, region, bucket, prefix, credentialsFile, pathStyle, whenRequired, maxAttempts, firstBackoff,
                requestTimeout);
    }

    /** The same with other retry settings (tests shorten the backoff). */
    public S3Settings withRetries(int attempts, Duration backoff) {
        return new S3Settings(endpoint, region, bucket, prefix, credentialsFile, pathStyle, checksumsWhenRequired, attempts, backoff,
                requestTimeout);
    }
}
