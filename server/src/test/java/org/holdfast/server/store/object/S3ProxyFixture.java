package org.holdfast.server.store.object;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.gaul.s3proxy.BlobStores;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3Proxy on a loopback port with its filesystem store in {@code dir} (no Docker), one
 * bucket made, and a credentials file in holdfast's format. With the system property
 * {@code holdfast.test.s3.endpoint} set (the Maven profile {@code ceph}), no proxy is started: the
 * tests use that store instead, each fixture under a prefix of its own (see {@link ExternalStore}).
 */
public final class S3ProxyFixture implements AutoCloseable {
    public static final String BUCKET = "holdfast-test";
    private static final String ACCESS = "test-access";
    private static final String SECRET = "test-secret-not-logged";

    private final S3Proxy proxy; // null on an external store
    private final URI endpoint;
    private final Path credentials;
    private final String bucket;
    private final String runPrefix;
    private final String secret;

    private S3ProxyFixture(S3Proxy proxy, URI endpoint, Path credentials, String bucket, String runPrefix, String secret) {
        this.proxy = proxy;
        this.endpoint = endpoint;
        this.credentials = credentials;
        this.bucket = bucket;
        this.runPrefix = runPrefix;
        this.secret = secret;
    }

    /**
     * Starts S3Proxy storing into {@code dir}/blobs and makes {@link #BUCKET}; or, with
     * {@code holdfast.test.s3.endpoint} set, uses that store (the bucket made if missing).
     */
    public static S3ProxyFixture start(Path dir) throws Exception {
        ExternalStore external = ExternalStore.fromSystemProperties();
        if (external != null) {
            Path credentials = external.writeCredentials(dir);
            external.ensureBucket();
            return new S3ProxyFixture(null, external.endpoint(), credentials, external.bucket(), external.newRunPrefix(),
                    external.secretKey());
        }
        Path blobs = Files.createDirectories(dir.resolve("blobs"));
        Properties p = new Properties();
        p.setProperty("jclouds.filesystem.basedir", blobs.toString());
        p.setProperty("jclouds.identity", ACCESS);
        p.setProperty("jclouds.credential", SECRET);
        S3Proxy proxy = S3Proxy.builder().blobStore(BlobStores.create("filesystem", p)).endpoint(URI.create("http://127.0.0.1:0"))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS, SECRET).build();
        proxy.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!"STARTED".equals(proxy.getState())) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("S3Proxy did not start: " + proxy.getState());
            }
            Thread.sleep(10);
        }
        URI endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
        Path credentials = dir.resolve("s3-credentials.properties");
        Files.writeString(credentials, "access-key=" + ACCESS + "\nsecret-key=" + SECRET + "\n");
        try (S3Client c = S3Client.builder().endpointOverride(endpoint).region(Region.US_EAST_1).forcePathStyle(true)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS, SECRET))).build()) {
            c.createBucket(r -> r.bucket(BUCKET));
        }
        return new S3ProxyFixture(proxy, endpoint, credentials, BUCKET, "", SECRET);
    }

    /** True when the tests run against an external store (that this fixture cannot stop). */
    public boolean external() {
        return proxy == null;
    }

    /** The secret key, for tests that check it never reaches a log. */
    public String secretKey() {
        return secret;
    }

    /** The bucket the tests use: {@link #BUCKET} on S3Proxy, the configured one on an external store. */
    public String bucket() {
        return bucket;
    }

    /** The store prefix for a test's {@code prefix}: the same on S3Proxy, under this fixture's own prefix on an external store. */
    public String prefix(String prefix) {
        return runPrefix + prefix;
    }

    public URI endpoint() {
        return endpoint;
    }

    public int port() {
        return endpoint.getPort();
    }

    /** Settings for the bucket at {@code endpoint} (this proxy, or a faulty proxy in front of it), short backoff. */
    public S3Settings settings(URI endpoint, String prefix) {
        return S3Settings.of(endpoint, "us-east-1", bucket, prefix(prefix), credentials, true).withRetries(4, Duration.ofMillis(10));
    }

    public S3Settings settings(String prefix) {
        return settings(endpoint, prefix);
    }

    @Override
    public void close() throws IOException {
        if (proxy == null) {
            return; // the store stays up; this fixture's objects stay under its prefix for a look afterwards
        }
        try {
            proxy.stop();
        } catch (Exception e) {
            throw new IOException("stopping S3Proxy failed", e);
        }
    }
}
