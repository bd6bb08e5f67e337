package org.holdfast.server.store.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
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
}
