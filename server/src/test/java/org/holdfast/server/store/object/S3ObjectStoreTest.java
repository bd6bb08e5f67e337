package org.holdfast.server.store.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.holdfast.common.ports.TestPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.holdfast.server.store.object.ObjectStoreUnavailableException.Reason;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link S3ObjectStore} against a real S3Proxy (filesystem store): create-only PUTs refused the
 * second time, ranged GETs, HEAD/list/delete, the request counters, and 503 Slow Down retried with
 * backoff (then reported as the store being unavailable, never as bad data).
 */
class S3ObjectStoreTest {
    @TempDir
    Path dir;

    private S3ProxyFixture s3;

    @BeforeEach
    void start() throws Exception {
        s3 = S3ProxyFixture.start(dir);
    }

    @AfterEach
    void stop() throws Exception {
        s3.close();
    }

    private Path file(String name, int size, long seed) throws Exception {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return Files.write(dir.resolve(name), b);
    }

    @Test
    void createOnly_secondPutRefused_firstContentKept() throws Exception {
        Path a = file("a", 10_000, 1);
        Path b = file("b", 10_000, 2);
        try (S3ObjectStore store = S3ObjectStore.open(s3.settings("p/"))) { // the probe passed: S3Proxy honours If-None-Match
            assertThat(store.putIfAbsent("k", a)).isTrue();
            assertThat(store.putIfAbsent("k", b)).as("412: an existing object is never overwritten").isFalse();
            assertThat(store.getRange("k", 0, 10_000)).isEqualTo(Files.readAllBytes(a));
            ObjectStoreStats st = store.stats();
            assertThat(st.puts()).as("two probe PUTs and ours").isEqualTo(4);
            assertThat(st.putBytes()).as("the refused PUT moved no counted bytes").isEqualTo(10_000 + "holdfast create-only probe".length());
        }
    }

    @Test
    void rangedGet_headListDelete() throws Exception {
        Path a = file("a", 100_000, 3);
        byte[] all = Files.readAllBytes(a);
        try (S3ObjectStore store = S3ObjectStore.open(s3.settings("q/"))) {
            store.putIfAbsent("logs/x", a);
            assertThat(store.getRange("logs/x", 12_345, 777)).isEqualTo(Arrays.copyOfRange(all, 12_345, 12_345 + 777));
            assertThat(store.stats().getBytes()).as("only the range came over the wire").isEqualTo(777);
            assertThat(store.size("logs/x")).hasValue(100_000);
            assertThat(store.size("logs/none")).isEmpty();
            assertThat(store.list("logs/")).containsExactly("logs/x");
            Path back = dir.resolve("back");
            store.download("logs/x", back);
            assertThat(Files.readAllBytes(back)).isEqualTo(all);
            store.delete("logs/x");
            assertThat(store.size("logs/x")).isEmpty();
            assertThatThrownBy(() -> store.getRange("logs/x", 0, 1)).isInstanceOf(ObjectMissingException.class);
        }
    }

    @Test
    void size_404FromAGatewayOnHead_isNotTakenForAbsence_storesOwnNoSuchKeyIs() throws Exception {
        Path a = file("a", 5_000, 5);
        try (SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            URI via = URI.create("http://127.0.0.1:" + proxy.port());
            try (S3ObjectStore store = S3ObjectStore.open(s3.settings(via, "h/"))) {
                store.putIfAbsent("logs/x", a);
                proxy.notFoundNext(100, "text/html", "<html><body><h1>404 Not Found</h1>nginx</body></html>");
                assertThatThrownBy(() -> store.size("logs/x")).as("the HEAD's 404 has no body; the GET's names no NoSuchKey")
                        .isInstanceOf(ObjectStoreUnavailableException.class).hasMessageContaining("not NoSuchKey");
                proxy.notFoundNext(1, "text/html", "<html>404</html>");
                assertThat(store.size("logs/x")).as("a gateway 404 on the HEAD only: the GET finds the object").hasValue(5_000);
                proxy.notFoundNext(0, "text/html", "");
                assertThat(store.size("logs/none")).as("the store's own NoSuchKey is absence").isEmpty();
                assertThat(store.size("logs/x")).hasValue(5_000);
            }
        }
    }

    @Test
    void size_emptyObjectBehindAGatewaysHead404_zeroNotAbsent() throws Exception {
        Path empty = Files.write(dir.resolve("empty"), new byte[0]);
        try (SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            URI via = URI.create("http://127.0.0.1:" + proxy.port());
            try (S3ObjectStore store = S3ObjectStore.open(s3.settings(via, "z/"))) {
                assertThat(store.putIfAbsent("logs/empty", empty)).isTrue();
                assertThat(store.size("logs/empty")).hasValue(0);
                proxy.notFoundNext(1, "text/html", "<html>404</html>");
                assertThat(store.size("logs/empty")).as("the one-byte GET of an empty object is refused its range: it exists")
                        .hasValue(0);
                assertThat(store.stats().gets()).as("the HEAD's 404 was confirmed by a GET").isEqualTo(1);
                store.delete("logs/none");
                assertThat(store.list("logs/")).as("deleting a missing key changed nothing").containsExactly("logs/empty");
            }
        }
    }

    @Test
    void slowDown_retriedWithBackoff_thenUnavailableNotCorrupt() throws Exception {
        Path a = file("a", 5_000, 4);
        try (SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            URI via = URI.create("http://127.0.0.1:" + proxy.port());
            proxy.failNext(2);
            try (S3ObjectStore store = S3ObjectStore.open(s3.settings(via, "r/"))) {
                assertThat(proxy.refused()).isEqualTo(2);
                assertThat(store.stats().retries()).as("each 503 retried").isEqualTo(2);
                assertThat(store.putIfAbsent("k", a)).isTrue();
            }
            proxy.failNext(100);
            try (S3ObjectStore store = S3ObjectStore.connect(s3.settings(via, "r/"))) {
                assertThatThrownBy(() -> store.getRange("k", 0, 10))
                        .isInstanceOf(ObjectStoreUnavailableException.class)
                        .hasMessageContaining("failed after 4 attempt(s)");
                assertThat(store.stats().retries()).isEqualTo(3);
            }
            proxy.failNext(0);
            try (S3ObjectStore store = S3ObjectStore.connect(s3.settings(via, "r/"))) {
                assertThat(store.getRange("k", 0, 5_000)).isEqualTo(Files.readAllBytes(a));
            }
        }
    }

    @Test
    void rateLimits_readsPacedWritesFree_waitCounted() throws Exception {
        Path a = file("a", 1_000, 5);
        try (S3ObjectStore store = S3ObjectStore.open(s3.settings("t/").withRateLimits(20, 0))) {
            for (int i = 0; i < 5; i++) {
                store.putIfAbsent("w" + i, a);
            }
            assertThat(store.stats().rateLimitedMillis()).as("writes unlimited: no wait").isZero();
            long t0 = System.nanoTime();
            // four readers at once: the limiter, not the store's latency, sets the pace; after idling it grants a
            // burst of up to one second's permits, so 41 permits at 20 per second take at least a second
            var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
            try {
                List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
                for (int i = 0; i < 41; i++) {
                    String key = "w" + (i % 5);
                    done.add(pool.submit(() -> assertThat(store.size(key)).hasValue(1_000)));
                }
                for (var f : done) {
                    f.get();
                }
            } finally {
                pool.shutdown();
            }
            long reads = System.nanoTime() - t0;
            assertThat(Duration.ofNanos(reads)).as("41 HEADs at 20 per second, 20 of them a burst").isGreaterThan(Duration.ofMillis(900));
            ObjectStoreStats st = store.stats();
            assertThat(st.heads()).isEqualTo(41);
            assertThat(st.rateLimitedMillis()).as("the wait is counted").isPositive();
        }
        assertThatThrownBy(() -> s3.settings("t/").withRateLimits(-1, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max-read-requests-per-second");
    }

    @Test
    void probe_answerOfTheFirstPutLost_triesAFreshKeyAndPasses() throws Exception {
        try (SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            proxy.cutNext(1); // the first PUT is stored, its answer lost: the retry meets 412 on a key nobody else knows
            try (S3ObjectStore store = S3ObjectStore.open(s3.settings(URI.create("http://127.0.0.1:" + proxy.port()), "u/"))) {
                ObjectStoreStats st = store.stats();
                assertThat(st.retries()).isEqualTo(1);
                assertThat(st.puts()).as("cut, 412, then a fresh key's two PUTs").isEqualTo(4);
                assertThat(st.deletes()).as("both probe keys removed").isEqualTo(2);
            }
            try (S3ObjectStore direct = S3ObjectStore.connect(s3.settings("u/"))) {
                assertThat(direct.list("probe/")).as("no probe object left").isEmpty();
            }
        }
    }

    @Test
    void startProblems_missingBucketUnreachableRefusedCredentials_namedNotCorrupt() throws Exception {
        S3Settings good = s3.settings("v/").withRetries(2, Duration.ofMillis(5));
        S3Settings noBucket = new S3Settings(good.endpoint(), good.region(), "no-such-bucket", "v/", good.credentialsFile(), true, true, 2,
                Duration.ofMillis(5), Duration.ofSeconds(10), 0, 0);
        assertThatThrownBy(() -> S3ObjectStore.open(noBucket)).isInstanceOfSatisfying(ObjectStoreUnavailableException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.NO_SUCH_BUCKET)).hasMessageContaining("the bucket no-such-bucket does not exist");
        int closed = TestPorts.claim(); // claimed: no test JVM listens there
        S3Settings nobody = s3.settings(URI.create("http://127.0.0.1:" + closed), "v/").withRetries(2, Duration.ofMillis(5));
        assertThatThrownBy(() -> S3ObjectStore.open(nobody)).isInstanceOfSatisfying(ObjectStoreUnavailableException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.UNREACHABLE)).hasMessageContaining("failed after 2 attempt(s)")
                .hasMessageContaining("127.0.0.1:" + closed);
        Path wrong = Files.writeString(dir.resolve("wrong.properties"), "access-key=test-access\nsecret-key=not-the-secret\n");
        S3Settings denied = new S3Settings(good.endpoint(), good.region(), good.bucket(), "v/", wrong, true, true, 2, Duration.ofMillis(5),
                Duration.ofSeconds(10), 0, 0);
        assertThatThrownBy(() -> S3ObjectStore.open(denied)).isInstanceOfSatisfying(ObjectStoreUnavailableException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.ACCESS_DENIED)).hasMessageNotContaining("not-the-secret");
    }
}
