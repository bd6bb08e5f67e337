package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real server (child JVM, Spring wiring, metrics) and the real agent on {@code holdfast.store.backend=s3}
 * against S3Proxy in this JVM: backups in compressed frames roll 128 KiB logs, which are uploaded;
 * with every sealed log deleted from the data directory (catalog kept), both snapshots restore
 * byte-identical, read back by ranges from the object store, and fsck and verify are clean.
 */
class ObjectStoreE2eTest {
    private static final LogDir logs = new LogDir("ObjectStoreE2eTest");
    private static final int BS = 4096;

    @TempDir
    Path dir;

    /** Half random, half compressible blocks: frames and single blocks both reach the logs. */
    static byte[] image(long seed) {
        byte[] image = new byte[512 * BS];
        new Random(seed).nextBytes(image);
        for (int i = 256; i < 512; i++) {
            java.util.Arrays.fill(image, i * BS + 64, (i + 1) * BS, (byte) (i + seed));
        }
        return image;
    }

    static long metric(ServerProcess server, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? ([0-9.E+]+)$").matcher(server.get("/actuator/prometheus").body());
        return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    }

    static List<Path> logFiles(Path data) throws Exception {
        try (Stream<Path> s = Files.list(data)) {
            return s.filter(p -> p.getFileName().toString().matches("log-[0-9a-f]{8}\\.hfl")).sorted().toList();
        }
    }

    @Test
    void backendS3_sealedLogsWiped_everySnapshotRestoresFromTheObjectStore_fsckAndVerifyClean() throws Exception {
        byte[] first = image(1);
        byte[] second = first.clone();
        System.arraycopy(image(2), 0, second, 100 * BS, 64 * BS);
        Path a = Files.write(dir.resolve("a.img"), first);
        AgentProcess agent = new AgentProcess(logs);
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3"))) {
            Map<String, String> props = Map.of(
                    "holdfast.store.backend", "s3",
                    "holdfast.store.s3.endpoint", s3.endpoint().toString(),
                    "holdfast.store.s3.bucket", s3.bucket(),
                    "holdfast.store.s3.prefix", s3.prefix("e2e/"),
                    "holdfast.store.s3.credentials-file", s3.settings("").credentialsFile().toString(),
                    "holdfast.store.s3.node", "node-1",
                    "holdfast.store.log-roll-size", "128KB",
                    "holdfast.verify.schedule", "0",
                    "holdfast.verify.window", "0");
            try (ServerProcess server = ServerProcess.start(dir.resolve("server"), "sungem", props, logs)) {
                Path state = Files.createDirectories(dir.resolve("state"));
                BackupSummary s1 = agent.backup(server, "vm", a, state);
                Files.write(a, second);
                BackupSummary s2 = agent.backup(server, "vm", a, state);
                Path data = server.dataDir().resolve("data");
                List<Path> files = logFiles(data);
                List<Path> sealed = files.subList(0, files.size() - 1); // the newest log is the active one
                assertThat(sealed).as("128 KiB logs rolled").hasSizeGreaterThanOrEqualTo(4);
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> metric(server, "holdfast_objects_logs_uploaded_total") >= sealed.size());
                assertThat(metric(server, "holdfast_objects_requests_total")).as("counted").isPositive();
                assertThat(server.log()).doesNotContain(s3.secretKey());

                server.close();
                for (Path p : sealed) {
                    Files.delete(p);
                }
                server.start();
                for (BackupSummary s : List.of(s1, s2)) {
                    Path out = dir.resolve(s.snapshotId() + ".restored");
                    agent.restore(server, "vm", s.snapshotId(), out);
                    assertThat(Files.readAllBytes(out)).as("snapshot %s from the object store", s.snapshotId())
                            .isEqualTo(s == s1 ? first : second);
                }
                assertThat(metric(server, "holdfast_objects_cache_range_gets_total")).as("the wiped logs read by range").isPositive();
                JsonNode fsck = server.runJob("/api/v1/gc/fsck", Duration.ofMinutes(2));
                assertThat(fsck.path("state").asText()).as(fsck.toString()).isEqualTo("succeeded");
                assertThat(fsck.path("result").path("dataLoss").asBoolean()).as(fsck.toString()).isFalse();
                JsonNode verify = server.runJob("/api/v1/verify", Duration.ofMinutes(2));
                assertThat(verify.path("state").asText()).as(verify.toString()).isEqualTo("succeeded");
                assertThat(verify.path("result").path("badBlocks").asInt()).as(verify.toString()).isZero();
                assertThat(logFiles(data)).as("read by range, never downloaded whole").doesNotContainAnyElementsOf(sealed);
                assertThat(metric(server, "holdfast_objects_cache_size_bytes")).as("ranges cached").isPositive();
            }
        }
    }
}
