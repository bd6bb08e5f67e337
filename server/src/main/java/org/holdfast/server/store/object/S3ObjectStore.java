package org.holdfast.server.store.object;

import com.google.common.util.concurrent.RateLimiter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
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
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
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

    /**
     * A ranged GET, read from the answer's stream: only a 206 whose Content-Range starts at {@code offset}
     * and ends at the range's end (or, before it, at the object's end) is taken. A 200 (a server or proxy that ignores Range sends the whole
     * object) is refused without reading its body: its first bytes are not the bytes at {@code offset},
     * and the whole object is not to be held in memory.
     */
    @Override
    public byte[] getRange(String name, long offset, int length) {
        if (offset < 0 || length <= 0) {
            throw new IllegalArgumentException("bad range " + offset + "+" + length);
        }
        long end = offset + length - 1;
        return call("GET", name, gets, () -> {
            ResponseInputStream<GetObjectResponse> in = client.getObject(r -> r.bucket(settings.bucket()).key(key(name))
                    .range("bytes=" + offset + "-" + end));
            boolean read = false;
            try {
                GetObjectResponse answer = in.response();
                int status = answer.sdkHttpResponse().statusCode();
                if (status != 206) {
                    throw oddAnswer(name, "answered " + status + " to a GET of bytes " + offset + "-" + end
                            + (status == 200 ? " (the whole object: Range ignored)" : "") + "; holdfast reads archived logs by ranges");
                }
                ContentRange range = ContentRange.parse(answer.contentRange());
                // fewer bytes than asked only at the object's end: callers take a short answer for the object's end
                if (range == null || range.unsatisfied() || range.first() != offset || range.last() > end
                        || range.last() < end && (range.total() == ContentRange.UNKNOWN || range.last() != range.total() - 1)) {
                    throw oddAnswer(name, "answered a GET of bytes " + offset + "-" + end + " with Content-Range "
                            + quoted(answer.contentRange()) + ", not that range (or its part up to the object's end)");
                }
                int n = (int) (range.last() - range.first() + 1);
                byte[] b = readBody(name, in, n);
                read = true;
                getBytes.addAndGet(b.length);
                return b;
            } finally {
                closeOrAbort(in, read);
            }
        });
    }

    /** Exactly {@code n} bytes of an answer's body; a cut-off body fails as the store not answering (retried). */
    private byte[] readBody(String name, InputStream in, int n) {
        try {
            byte[] b = in.readNBytes(n);
            if (b.length < n) {
                throw SdkClientException.create("GET " + key(name) + ": the answer ended after " + b.length + " of " + n + " bytes");
            }
            return b;
        } catch (IOException e) {
            // what the SDK makes of a cut-off answer it reads itself: retried as no answer
            throw SdkClientException.create("GET " + key(name) + ": reading the answer failed: " + e, e);
        }
    }

    /** Closes an answer read to its end (its connection is kept); aborts one that is not (its connection is dropped, the rest never read). */
    private static void closeOrAbort(ResponseInputStream<?> in, boolean readToEnd) {
        if (readToEnd) {
            try {
                in.close();
            } catch (IOException e) {
                in.abort();
            }
        } else {
            in.abort();
        }
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
        try {
            call("DELETE", name, deletes, () -> {
                client.deleteObject(r -> r.bucket(settings.bucket()).key(key(name)));
                return null;
            });
        } catch (ObjectMissingException gone) {
            // S3 answers 204 for a missing key, some stores 404 NoSuchKey: either way it is not there (any other 404 still fails)
        }
    }

    /**
     * The object's size, or empty if the store says it does not exist. A HEAD answer has no body, so
     * its 404 cannot say whether the store (NoSuchKey) or something in front of it (a proxy, a wrong
     * endpoint) answered; such a 404, and a HEAD 200 without a length, is confirmed with a one-byte
     * GET, whose error names itself: NoSuchKey is absence, any other 404 fails as
     * {@link ObjectStoreUnavailableException}, as {@link #getRange} does. So no caller (compaction,
     * catalog restore, the archive's witness check) takes a gateway's 404 for a lost data log. The
     * GET's body is never read: see {@link #sizeFromGet}.
     */
    @Override
    public OptionalLong size(String name) {
        Long head = call("HEAD", name, heads, () -> {
            try {
                return client.headObject(r -> r.bucket(settings.bucket()).key(key(name))).contentLength(); // null: no length given
            } catch (S3Exception e) {
                if (e.statusCode() == 404) {
                    return null;
                }
                throw e;
            }
        });
        if (head != null && head >= 0) {
            return OptionalLong.of(head);
        }
        try {
            return OptionalLong.of(call("GET", name, gets, () -> {
                ResponseInputStream<GetObjectResponse> in;
                try {
                    in = client.getObject(r -> r.bucket(settings.bucket()).key(key(name)).range("bytes=0-0"));
                } catch (S3Exception e) {
                    if (e.statusCode() == 416) {
                        return sizeFromUnsatisfiable(name, e);
                    }
                    throw e;
                }
                try {
                    return sizeFromGet(name, in.response());
                } finally {
                    in.abort(); // the body is not needed: never read, however long it is
                }
            }));
        } catch (ObjectMissingException gone) {
            return OptionalLong.empty();
        }
    }

    /**
     * The size a GET of {@code bytes=0-0} answered: the total of a 206's Content-Range
     * ({@code bytes 0-0/12345}), or the Content-Length of a 200 (a server that ignores Range sends
     * the whole object: its length is the size). A missing or malformed header is refused naming it,
     * never read as absence or as some size.
     */
    private long sizeFromGet(String name, GetObjectResponse answer) {
        int status = answer.sdkHttpResponse().statusCode();
        if (status == 200) {
            Long length = answer.contentLength();
            if (length == null || length < 0) {
                throw oddAnswer(name, "answered a GET of bytes 0-0 with 200 (the whole object: Range ignored) and no Content-Length;"
                        + " its size is unknown");
            }
            return length;
        }
        ContentRange range = status == 206 ? ContentRange.parse(answer.contentRange()) : null;
        if (range == null || range.unsatisfied() || range.first() != 0 || range.total() == ContentRange.UNKNOWN) {
            throw oddAnswer(name, "answered a GET of bytes 0-0 with " + status + " and Content-Range " + quoted(answer.contentRange())
                    + "; a 206 must name the object's size as in 'bytes 0-0/12345'");
        }
        return range.total();
    }

    /**
     * A 416 to {@code bytes=0-0}: the store's InvalidRange (or {@code Content-Range: bytes *&#47;0}) says
     * the object exists and is empty, size 0. A 416 that says neither is not taken as a size.
     */
    private long sizeFromUnsatisfiable(String name, S3Exception e) {
        String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
        String header = e.awsErrorDetails() == null || e.awsErrorDetails().sdkHttpResponse() == null ? null
                : e.awsErrorDetails().sdkHttpResponse().firstMatchingHeader("Content-Range").orElse(null);
        ContentRange range = ContentRange.parse(header);
        boolean emptyByHeader = range != null && range.unsatisfied() && range.total() == 0;
        if (header == null ? "InvalidRange".equals(code) : emptyByHeader) {
            return 0;
        }
        throw oddAnswer(name, "answered a GET of bytes 0-0 with 416 " + (code == null ? "without an S3 error code" : code)
                + " and Content-Range " + quoted(header) + "; only an empty object (InvalidRange, or bytes */0) is refused that range");
    }

    /** A store answer holdfast cannot read as a statement about the object: REJECTED, naming the key, bucket, endpoint and what was odd. */
    private ObjectStoreUnavailableException oddAnswer(String name, String what) {
        return new ObjectStoreUnavailableException(Reason.REJECTED, "the object store at " + endpointName() + " " + what + " (key "
                + key(name) + ", bucket " + settings.bucket() + "); not taken as a statement about the object; check that"
                + " holdfast.store.s3.endpoint is the object store itself, not a proxy or cache in front of it", null);
    }

    private static String quoted(String header) {
        return header == null ? "missing" : "'" + header + "'";
    }

    /**
     * Page by page, each page one request (retried on its own). A listing is only as good as its
     * pages: a page that is not a ListBucketResult of this bucket (no Name of the bucket: a web
     * server's 200 page reads as an empty one), a key outside the prefix (the prefix ignored), or a
     * truncated page (IsTruncated true, or left out beside a NextContinuationToken) without a new
     * continuation token (the SDK's paginator would just stop) is refused, never taken as the end of
     * the keys: catalog restore takes a log missing from the listing for one that is not in the bucket.
     */
    @Override
    public List<String> list(String prefix) {
        String wanted = key(prefix);
        List<String> keys = new ArrayList<>();
        Set<String> tokens = new HashSet<>();
        String token = null;
        while (true) {
            String from = token;
            ListObjectsV2Response page = call("LIST", prefix, lists, () -> client.listObjectsV2(r -> r.bucket(settings.bucket())
                    .prefix(wanted).continuationToken(from)));
            if (!settings.bucket().equals(page.name())) {
                throw oddAnswer(prefix, "answered a LIST of the prefix with something that is not a listing of the bucket (bucket "
                        + quoted(page.name()) + ")");
            }
            // some stores leave IsTruncated out when it is false: then a next token alone says there is more
            boolean truncated = page.isTruncated() != null ? page.isTruncated()
                    : page.nextContinuationToken() != null && !page.nextContinuationToken().isEmpty();
            for (S3Object o : page.contents()) {
                if (o.key() == null || !o.key().startsWith(wanted)) {
                    throw oddAnswer(prefix, "listed the key " + quoted(o.key()) + " for the prefix " + wanted + " (the prefix ignored)");
                }
                keys.add(o.key().substring(settings.prefix().length()));
            }
            if (!truncated) {
                return keys;
            }
            token = page.nextContinuationToken();
            if (token == null || token.isEmpty() || !tokens.add(token)) {
                throw oddAnswer(prefix, "answered a LIST of the prefix with a truncated page (" + keys.size() + " keys so far) and "
                        + (token == null || token.isEmpty() ? "no" : "a repeated") + " NextContinuationToken; the rest of the keys"
                        + " cannot be listed");
            }
        }
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
