package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.SlowDownProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalog backup's wait for its data logs ({@link DataLogsInBucket#seal}) against S3Proxy behind a
 * proxy that refuses or slows requests: failed uploads are retried with a doubling backoff, the wait
 * ends when no upload got through for the stall time (not after a fixed total), and the progress
 * lines say what it waits for.
 */
class DataLogsInBucketTest {
    private static final Pattern RETRY = Pattern.compile("retry in (\\d+) s");

    @TempDir
    Path dir;

    private ArchiveFixture f;
    private SlowDownProxy proxy;

    @BeforeEach
    void start() throws Exception {
        f = new ArchiveFixture(dir);
        proxy = new SlowDownProxy(f.s3.port());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        f.close();
    }

    /** An archive whose requests go through the proxy (opened, and its probe passed, before any fault is set). */
    private LogArchive archive() {
        return new LogArchive(S3ObjectStore.open(f.s3.settings(URI.create("http://127.0.0.1:" + proxy.port()), "t/")), "n1",
                LogCache.Settings.defaults());
    }

    private static List<Integer> retryWaits(List<String> lines) {
        List<Integer> waits = new ArrayList<>();
        for (String l : lines) {
            Matcher m = RETRY.matcher(l);
            if (m.find()) {
                waits.add(Integer.parseInt(m.group(1)));
            }
        }
        return waits;
    }

    @Test
    void seal_bucketRefusesForAWhile_retriesAfter1ThenAfter2Seconds_thenEveryLogIsInTheBucket() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.faults(new SlowDownProxy.Faults(1.0, 0, 0, 0, Duration.ZERO, 1)); // every request: 503 Slow Down
            ArchiveFixture.write(store, new byte[40][], 7);
            archive.awaitUploads(30_000); // the sync's own attempt has failed by now
            long failuresBefore = archive.stats().uploadFailures();
            List<String> lines = new CopyOnWriteArrayList<>();
            long t0 = System.nanoTime();
            List<Integer> missing = new DataLogsInBucket(store, Duration.ofSeconds(20)).seal(line -> {
                lines.add(line);
                if (line.contains("retry in 2 s")) {
                    proxy.faults(null); // the bucket takes uploads again
                }
            });
            long millis = (System.nanoTime() - t0) / 1_000_000;

            assertThat(missing).as("%s", lines).isEmpty();
            assertThat(lines.get(0)).as("says what it waits for").startsWith("waiting for data logs [1, 2, ").contains("20 s");
            assertThat(retryWaits(lines)).as("doubling backoff: %s", lines).containsExactly(1, 2);
            assertThat(archive.stats().uploadFailures() - failuresBefore).as("one failed try per wait").isEqualTo(2);
            assertThat(millis).as("waited out both backoffs").isGreaterThanOrEqualTo(3_000);
            for (int id = 1; id < store.compactableBelow(); id++) {
                assertThat(archive.isUploaded(id)).as("log %d in the bucket", id).isTrue();
            }
        }
    }

    @Test
    void seal_bucketRefusesThroughout_givesUpOnceNothingGotThroughForTheStallTime_namingTheLogs() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.faults(new SlowDownProxy.Faults(1.0, 0, 0, 0, Duration.ZERO, 2));
            ArchiveFixture.write(store, new byte[40][], 8);
            archive.awaitUploads(30_000);
            List<String> lines = new CopyOnWriteArrayList<>();
            long t0 = System.nanoTime();
            List<Integer> missing = new DataLogsInBucket(store, Duration.ofMillis(2_500)).seal(lines::add);
            long millis = (System.nanoTime() - t0) / 1_000_000;

            assertThat(missing).as("%s", lines).startsWith(1, 2).hasSizeGreaterThanOrEqualTo(3);
            assertThat(millis).as("the stall time, not more than a retry beyond it").isBetween(2_400L, 8_000L);
            assertThat(retryWaits(lines)).as("%s", lines).startsWith(1).allMatch(w -> w <= 2);
            assertThat(archive.isUploaded(1)).isFalse();
        }
    }

    /**
     * Every upload is slow (each request held 700 ms) but moving: the wait lasts longer than the stall
     * time in total, yet no stretch without a log getting through reaches it, so it ends with all there.
     */
    @Test
    void seal_slowButMovingUploads_waitsLongerThanTheStallTimeInTotal_untilAllAreThere() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.faults(new SlowDownProxy.Faults(0, 0, 0, 1.0, Duration.ofMillis(700), 3));
            ArchiveFixture.write(store, new byte[75][], 9); // five logs of 15 blocks
            List<String> lines = new CopyOnWriteArrayList<>();
            long t0 = System.nanoTime();
            List<Integer> missing = new DataLogsInBucket(store, Duration.ofMillis(2_000)).seal(lines::add);
            long millis = (System.nanoTime() - t0) / 1_000_000;

            assertThat(missing).as("%s", lines).isEmpty();
            assertThat(millis).as("longer than the stall time in total").isGreaterThan(2_000);
            assertThat(lines).anyMatch(l -> l.contains("more got through"));
            assertThat(archive.stats().uploadFailures()).isZero();
        }
    }
}
