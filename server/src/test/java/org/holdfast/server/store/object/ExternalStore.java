package org.holdfast.server.store.object;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * An S3-compatible store outside the test JVM (Ceph RGW from {@code docker/ceph/start-single-node.sh}),
 * named by the system properties {@code holdfast.test.s3.endpoint}, {@code .access-key},
 * {@code .secret-key} and {@code .bucket}; region us-east-1, path-style URLs, on this machine (the
 * Slow Down test's proxy forwards to the endpoint's port on loopback). Objects stay in the store
 * after a run, so each fixture writes under a fresh {@code run-...} prefix: the suites' fixed keys
 * never meet a previous run's objects.
 */
record ExternalStore(URI endpoint, String accessKey, String secretKey, String bucket) {
    private static final String P = "holdfast.test.s3.";

    /** The configured store, or null when {@code holdfast.test.s3.endpoint} is not set (S3Proxy is used). */
    static ExternalStore fromSystemProperties() {
        String endpoint = System.getProperty(P + "endpoint", "").trim();
        if (endpoint.isEmpty()) {
            return null;
        }
        return new ExternalStore(URI.create(endpoint), required("access-key"), required("secret-key"),
                System.getProperty(P + "bucket", S3ProxyFixture.BUCKET));
    }

    private static String required(String name) {
        String v = System.getProperty(P + name, "").trim();
        if (v.isEmpty()) {
            throw new IllegalStateException(P + "endpoint is set but " + P + name + " is not: set both (mvn -Pceph sets them all)");
        }
        return v;
    }

    /** Writes the keys in holdfast's credentials-file format into {@code dir}. */
    Path writeCredentials(Path dir) throws IOException {
        Path file = Files.createDirectories(dir).resolve("s3-credentials.properties");
        return Files.writeString(file, "access-key=" + accessKey + "\nsecret-key=" + secretKey + "\n");
    }

    /** Makes the bucket unless it exists (the first fixture of a run makes it). */
    void ensureBucket() {
        try (S3Client c = S3Client.builder().endpointOverride(endpoint).region(Region.US_EAST_1).forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey))).build()) {
            try {
                c.headBucket(r -> r.bucket(bucket));
            } catch (S3Exception e) { // NoSuchBucket, or a bare 404 (HEAD has no body)
                if (e.statusCode() != 404) {
                    throw e;
                }
                c.createBucket(r -> r.bucket(bucket));
            }
        }
    }

    /** A prefix no earlier fixture used. */
    String newRunPrefix() {
        byte[] r = new byte[6];
        ThreadLocalRandom.current().nextBytes(r);
        return "run-" + System.currentTimeMillis() + "-" + HexFormat.of().formatHex(r) + "/";
    }
}
