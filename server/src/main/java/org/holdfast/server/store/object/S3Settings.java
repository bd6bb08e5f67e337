package org.holdfast.server.store.object;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * Where and how to reach an S3-compatible store. {@code credentialsFile} (properties
 * {@code access-key} and {@code secret-key}) may be null: the SDK's default chain (the environment,
 * {@code AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY}) is used. {@code checksumsWhenRequired}
 * sets the SDK's request checksum calculation and response validation to WHEN_REQUIRED, which Ceph
 * RGW and Garage need. {@code maxReadsPerSecond} (GET, HEAD, LIST) and {@code maxWritesPerSecond}
 * (PUT, DELETE) cap the request rate, every attempt counted; 0 is unlimited.
 */
public record S3Settings(URI endpoint, String region, String bucket, String prefix, Path credentialsFile, boolean pathStyle,
        boolean checksumsWhenRequired, int maxAttempts, Duration firstBackoff, Duration requestTimeout, double maxReadsPerSecond,
        double maxWritesPerSecond) {

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
        if (!(maxReadsPerSecond >= 0) || !(maxWritesPerSecond >= 0)) {
            throw new IllegalArgumentException("holdfast.store.s3.max-read-requests-per-second and max-write-requests-per-second"
                    + " must be 0 (unlimited) or positive, got " + maxReadsPerSecond + " and " + maxWritesPerSecond);
        }
    }

    /** Settings with the defaults for the retries (6 attempts, backoff from 200 ms, 60 s per request) and no rate limits. */
    public static S3Settings of(URI endpoint, String region, String bucket, String prefix, Path credentialsFile, boolean pathStyle) {
        return new S3Settings(endpoint, region, bucket, prefix, credentialsFile, pathStyle, true, 6, Duration.ofMillis(200),
                Duration.ofSeconds(60), 0, 0);
    }

    /**
     * The settings the server's {@code holdfast.store.*} properties give ({@code property} answers a
     * full property name, or null), with the default retries; null unless {@code holdfast.store.backend}
     * is {@code s3}. For the offline tools, which run without the server's configuration framework.
     */
    public static S3Settings fromProperties(UnaryOperator<String> property) {
        String backend = property.apply("holdfast.store.backend");
        if (backend == null || backend.isBlank() || backend.trim().equals("local")) {
            return null;
        }
        if (!backend.trim().equals("s3")) {
            throw new IllegalArgumentException("holdfast.store.backend must be 'local' or 's3', not '" + backend + "'");
        }
        UnaryOperator<String> s3 = name -> {
            String v = property.apply("holdfast.store.s3." + name);
            return v == null || v.isBlank() ? null : v.trim();
        };
        String endpoint = s3.apply("endpoint");
        String credentials = s3.apply("credentials-file");
        return of(endpoint == null ? null : URI.create(endpoint), s3.apply("region"), s3.apply("bucket"), s3.apply("prefix"),
                credentials == null ? null : Path.of(credentials), !"false".equals(s3.apply("path-style")))
                .withChecksumsWhenRequired(!"false".equals(s3.apply("checksums-when-required")))
                .withRateLimits(rate(s3, "max-read-requests-per-second"), rate(s3, "max-write-requests-per-second"));
    }

    private static double rate(UnaryOperator<String> s3, String name) {
        String v = s3.apply(name);
        try {
            return v == null ? 0 : Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("holdfast.store.s3." + name + " must be a number (requests per second, 0 = unlimited),"
                    + " not '" + v + "'", e);
        }
    }

    /** The same with the SDK's checksums on every request ({@code false}) or only where an operation needs them. */
    public S3Settings withChecksumsWhenRequired(boolean whenRequired) {
        return new S3Settings(endpoint, region, bucket, prefix, credentialsFile, pathStyle, whenRequired, maxAttempts, firstBackoff,
                requestTimeout, maxReadsPerSecond, maxWritesPerSecond);
    }

    /** The same with other retry settings (tests shorten the backoff). */
    public S3Settings withRetries(int attempts, Duration backoff) {
        return new S3Settings(endpoint, region, bucket, prefix, credentialsFile, pathStyle, checksumsWhenRequired, attempts, backoff,
                requestTimeout, maxReadsPerSecond, maxWritesPerSecond);
    }

    /** The same with request-rate limits: reads (GET, HEAD, LIST) and writes (PUT, DELETE) per second, 0 = unlimited. */
    public S3Settings withRateLimits(double readsPerSecond, double writesPerSecond) {
        return new S3Settings(endpoint, region, bucket, prefix, credentialsFile, pathStyle, checksumsWhenRequired, maxAttempts,
                firstBackoff, requestTimeout, readsPerSecond, writesPerSecond);
    }
}
