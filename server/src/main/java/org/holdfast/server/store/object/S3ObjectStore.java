package org.holdfast.server.store.object;

import com.google.common.util.concurrent.RateLimiter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.holdfast.server.store.object.ObjectStoreUnavailableException.Reason;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * {@link ObjectStore} on an S3-compatible service through the AWS SDK v2. The SDK's own retries are
 * off: this class retries timeouts, 5xx, 429 and 503 SlowDown with exponential backoff and jitter,
 * and counts every attempt, so the request figures are what the store bills. Every attempt first
 * takes a permit from the read (GET, HEAD, LIST) or write (PUT, DELETE) rate limit, if one is set.
 */
public final class S3ObjectStore implements ObjectStore {
    private static final System.Logger LOG = System.getLogger(S3ObjectStore.class.getName());
    private static final long MAX_BACKOFF_MILLIS = 10_000;

    private final S3Settings settings;
    private final S3Client client;
    private final AtomicLong puts = new AtomicLong();
    private final AtomicLong putBytes = new AtomicLong();
    private final AtomicLong gets = new AtomicLong();
    private final AtomicLong getBytes = new AtomicLong();
    private final AtomicLong deletes = new AtomicLong();
    private final AtomicLong heads = new AtomicLong();
    private final AtomicLong lists = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    private final AtomicLong rateLimitedNanos = new AtomicLong();
    // null: unlimited
    private final RateLimiter reads;
    private final RateLimiter writes;

    private S3ObjectStore(S3Settings settings, S3Client client) {
        this.settings = settings;
        this.client = client;
        this.reads = settings.maxReadsPerSecond() > 0 ? RateLimiter.create(settings.maxReadsPerSecond()) : null;
        this.writes = settings.maxWritesPerSecond() > 0 ? RateLimiter.create(settings.maxWritesPerSecond()) : null;
    }

    /**
     * Connects to the store and probes that it honours create-only PUTs (the same probe key twice:
     * the second must be refused with 412). A store that overwrites is refused: a second writer
     * could then replace a sealed log.
     */
    public static S3ObjectStore open(S3Settings settings) {
        S3ObjectStore store = connect(settings);
        try {
            store.probeCreateOnly();
            return store;
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /**
     * Connects without the probe, which writes: for readers that never upload (the offline checkers)
     * and tests that look at the probe itself.
     */
    public static S3ObjectStore connect(S3Settings settings) {
        var b = S3Client.builder()
                .region(Region.of(settings.region()))
                .forcePathStyle(settings.pathStyle())
                .credentialsProvider(credentials(settings.credentialsFile()))
                .httpClientBuilder(ApacheHttpClient.builder().socketTimeout(settings.requestTimeout())
                        .connectionTimeout(java.time.Duration.ofSeconds(10)))
                .overrideConfiguration(c -> c.retryStrategy(AwsRetryStrategy.doNotRetry()).apiCallTimeout(settings.requestTimeout()));
        if (settings.endpoint() != null) {
            b.endpointOverride(settings.endpoint());
        }
        if (settings.checksumsWhenRequired()) {
            b.requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        }
        return new S3ObjectStore(settings, b.build());
    }

    private static AwsCredentialsProvider credentials(Path file) {
        if (file == null) {
            return DefaultCredentialsProvider.builder().build(); // the environment, system properties, profiles
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the object-store credentials file " + file + ": " + e.getMessage(), e);
        }
        String access = p.getProperty("access-key", p.getProperty("aws_access_key_id"));
        String secret = p.getProperty("secret-key", p.getProperty("aws_secret_access_key"));
        if (access == null || secret == null) {
            // names the file and the expected keys, never a value
            throw new IllegalArgumentException("the object-store credentials file " + file + " must hold access-key and secret-key");
        }
        return StaticCredentialsProvider.create(AwsBasicCredentials.create(access.trim(), secret.trim()));
    }

    /** The store's key for a name under the configured prefix. */
    private String key(String name) {
        return settings.prefix() + name;
    }

    void probeCreateOnly() {
        byte[] body = "holdfast create-only probe".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (int tries = 1;; tries++) {
            String probe = "probe/create-only-" + UUID.randomUUID();
            if (!putIfAbsent(probe, () -> RequestBody.fromBytes(body), body.length)) {
                // a fresh key "existed": the answer to a retried PUT whose first attempt was stored; try a new key
                delete(probe);
                if (tries < 3) {
                    continue;
                }
                throw new ObjectStoreUnavailableException(Reason.REJECTED, "the create-only probe " + key(probe)
                        + " was refused as existing on its first PUT, " + tries + " times with fresh keys", null);
            }
            boolean second = putIfAbsent(probe, () -> RequestBody.fromBytes(body), body.length);
            delete(probe);
            if (second) {
                throw new ObjectStoreUnavailableException(Reason.REJECTED, "the object store at " + settings.endpoint()
                        + " ignored If-None-Match: * (a second create-only PUT of the same key succeeded); holdfast needs"
                        + " create-only PUTs so that no sealed log can be overwritten. Use a store that honours them (AWS S3,"
                        + " Ceph RGW 16+, S3Proxy 2.x+, MinIO)", null);
            }
            return;
        }
    }

    @Override
    public boolean putIfAbsent(String name, Path file) {
        long len;
        try {
            len = Files.size(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return putIfAbsent(name, () -> RequestBody.fromFile(file), len);
    }

    private boolean putIfAbsent(String name, Supplier<RequestBody> body, long len) {
        return call("PUT", name, puts, () -> {
            try {
                client.putObject(r -> r.bucket(settings.bucket()).key(key(name)).ifNoneMatch("*"), body.get());
                putBytes.addAndGet(len);
                return true;
            } catch (S3Exception e) {
                if (e.statusCode() == 412) {
                    return false;
                }
                throw e;
            }
        });
    }

    @Override
    public byte[] getRange(String name, long offset, int length) {
        if (offset < 0 || length <= 0) {
            throw new IllegalArgumentException("bad range " + offset + "+" + length);
        }
        return call("GET", name, gets, () -> {
            byte[] b = client.getObjectAsBytes(r -> r.bucket(settings.bucket()).key(key(name))
                    .range("bytes=" + offset + "-" + (offset + length - 1))).asByteArray();
            getBytes.addAndGet(b.length);
            return b;
        });
    }

    @Override
    public void download(String name, Path target) {
        Path tmp = target.resolveSibling(target.getFileName() + ".download");
        call("GET", name, gets, () -> {
            Files.deleteIfExists(tmp);
            client.getObject(r -> r.bucket(settings.bucket()).key(key(name)), ResponseTransformer.toFile(tmp));
            getBytes.addAndGet(Files.size(tmp));
            return null;
        });
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void delete(String name) {
        call("DELETE", name, deletes, () -> {
            client.deleteObject(r -> r.bucket(settings.bucket()).key(key(name)));
            return null;
        });
    }

    /**
     * The object's size, or empty if the store says it does not exist. A HEAD answer has no body, so
     * its 404 cannot say whether the store (NoSuchKey) or something in front of it (a proxy, a wrong
     * endpoint) answered; such a 404 is confirmed with a one-byte GET, whose error names itself:
     * NoSuchKey is absence, any other 404 fails as {@link ObjectStoreUnavailableException}, as
     * {@link #getRange} does. So no caller (compaction, catalog restore, the archive's witness
     * check) takes a gateway's 404 for a lost data log.
     */
    @Override
    public OptionalLong size(String name) {
        OptionalLong head = call("HEAD", name, heads, () -> {
            try {
                return OptionalLong.of(client.headObject(r -> r.bucket(settings.bucket()).key(key(name))).contentLength());
            } catch (S3Exception e) {
                if (e.statusCode() == 404) {
                    return OptionalLong.empty();
                }
                throw e;
            }
        });
        if (head.isPresent()) {
            return head;
        }
        try {
            return OptionalLong.of(call("GET", name, gets, () -> totalLength(name, client.getObjectAsBytes(r -> r.bucket(settings.bucket())
                    .key(key(name)).range("bytes=0-0")).response().contentRange())));
        } catch (ObjectMissingException gone) {
            return OptionalLong.empty();
        }
    }

    /** The total of a Content-Range answer ({@code bytes 0-0/12345}): the object appeared between the HEAD and the GET. */
    private long totalLength(String name, String contentRange) {
        int slash = contentRange == null ? -1 : contentRange.lastIndexOf('/');
        if (slash < 0 || contentRange.endsWith("*")) {
            throw new ObjectStoreUnavailableException(Reason.REJECTED, "GET " + key(name) + " in bucket " + settings.bucket() + " at "
                    + endpointName() + " answered without a usable Content-Range (" + contentRange + "); check that"
                    + " holdfast.store.s3.endpoint is the object store itself", null);
        }
        return Long.parseLong(contentRange.substring(slash + 1).trim());
    }

    @Override
    public List<String> list(String prefix) {
        return call("LIST", prefix, lists, () -> client.listObjectsV2Paginator(r -> r.bucket(settings.bucket()).prefix(key(prefix)))
                .contents().stream().map(S3Object::key).map(k -> k.substring(settings.prefix().length())).toList());
    }

    @Override
    public ObjectStoreStats stats() {
        return new ObjectStoreStats(puts.get(), putBytes.get(), gets.get(), getBytes.get(), deletes.get(), heads.get(), lists.get(),
                retries.get(), rateLimitedNanos.get() / 1_000_000);
    }

    @Override
    public void close() {
        client.close();
    }

    /** One request with retries; {@code counter} counts every attempt (each is billed). */
    private <T> T call(String what, String name, AtomicLong counter, IoCall<T> request) {
        RateLimiter limit = what.equals("PUT") || what.equals("DELETE") ? writes : reads;
        for (int attempt = 1;; attempt++) {
            if (limit != null) {
                rateLimitedNanos.addAndGet((long) (limit.acquire() * 1e9));
            }
            counter.incrementAndGet();
            try {
                return request.run();
            } catch (S3Exception e) {
                String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
                if (e.statusCode() == 404 && "NoSuchBucket".equals(code)) {
                    throw new ObjectStoreUnavailableException(Reason.NO_SUCH_BUCKET, "the bucket " + settings.bucket() + " does not exist"
                            + " at " + endpointName() + " (" + what + " " + key(name) + " answered 404 NoSuchBucket); create it, or correct"
                            + " holdfast.store.s3.bucket", e);
                }
                if (e.statusCode() == 404 && "NoSuchKey".equals(code)) {
                    throw new ObjectMissingException(key(name));
                }
                if (e.statusCode() == 404) {
                    // only the store's own NoSuchKey says an object is gone: a 404 from a proxy, a load balancer or a
                    // wrong endpoint taken for one would mark every block of a data log bad (MissingLogSweep)
                    throw new ObjectStoreUnavailableException(Reason.REJECTED, what + " " + key(name) + " in bucket " + settings.bucket()
                            + " at " + endpointName() + " answered 404 " + (code == null ? "without an S3 error code" : code)
                            + ", not NoSuchKey: not taken as a missing object; check that holdfast.store.s3.endpoint is the object"
                            + " store itself (not a proxy or web server in front of another path)", e);
                }
                if (!retryable(e.statusCode()) || attempt >= settings.maxAttempts()) {
                    throw failed(e.statusCode() == 403 ? Reason.ACCESS_DENIED : retryable(e.statusCode()) ? Reason.FAILING
                            : Reason.REJECTED, what, name, attempt, e);
                }
                backoff(what, name, attempt, "HTTP " + e.statusCode());
            } catch (SdkClientException e) {
                // timeouts, refused or reset connections: the store did not answer, nothing is known about the data
                if (attempt >= settings.maxAttempts()) {
                    throw failed(Reason.UNREACHABLE, what, name, attempt, e);
                }
                backoff(what, name, attempt, e.getClass().getSimpleName());
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    private static boolean retryable(int status) {
        return status >= 500 || status == 429 || status == 408;
    }

    private ObjectStoreUnavailableException failed(Reason reason, String what, String name, int attempts, Exception e) {
        return new ObjectStoreUnavailableException(reason, what + " " + key(name) + " in bucket " + settings.bucket() + " at "
                + endpointName() + " failed after " + attempts + " attempt(s): " + e.getMessage()
                + "; " + hint(reason), e);
    }

    private static String hint(Reason reason) {
        return switch (reason) {
            case ACCESS_DENIED -> "check the credentials and that they may read and write the bucket";
            // Ceph RGW and Garage answer 400 to the SDK's default checksummed uploads
            case REJECTED -> "the store refused the request itself: with Ceph RGW or Garage keep"
                    + " holdfast.store.s3.checksums-when-required=true";
            default -> "check that the object store is reachable and the credentials are valid";
        };
    }

    private String endpointName() {
        return settings.endpoint() == null ? "AWS S3 (" + settings.region() + ")" : settings.endpoint().toString();
    }

    private void backoff(String what, String name, int attempt, String why) {
        retries.incrementAndGet();
        long base = Math.min(MAX_BACKOFF_MILLIS, settings.firstBackoff().toMillis() << Math.min(attempt - 1, 20));
        long sleep = base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
        LOG.log(System.Logger.Level.DEBUG, "{0} {1} failed ({2}), retry {3} in {4} ms", what, key(name), why, attempt, sleep);
        try {
            Thread.sleep(sleep);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ObjectStoreUnavailableException(what + " " + key(name) + " interrupted while waiting to retry", e);
        }
    }

    @FunctionalInterface
    private interface IoCall<T> {
        T run() throws IOException;
    }
}
