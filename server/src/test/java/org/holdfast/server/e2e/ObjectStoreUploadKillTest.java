package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.holdfast.server.store.object.SlowDownProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backend s3 with the real server process: killed right after a sealed log's PUT was stored and
 * before the catalog confirmed it (kill point {@code objects.upload.afterPut}), the next start
 * uploads it again, meets 412 and takes the stored object by its size: one object per log, nothing
 * lost. Then the offline fsck on the stopped server, its sealed logs wiped, fetches them from the
 * object store and is clean without writing into the data directory; every snapshot restores
 * byte-identical. And a server whose bucket does not exist refuses to start, saying so.
 */
class ObjectStoreUploadKillTest {
    private static final LogDir logs = new LogDir("ObjectStoreUploadKillTest");
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private static byte[] image(long seed) {
        byte[] image = new byte[512 * BS];
        new Random(seed).nextBytes(image);
        for (int i = 256; i < 512; i++) {
            java.util.Arrays.fill(image, i * BS + 64, (i + 1) * BS, (byte) (i + seed));
        }
        return image;
    }

    private static long metric(ServerProcess server, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? ([0-9.E+]+)$").matcher(server.get("/actuator/prometheus").body());
        return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    }

    private static List<Path> logFiles(Path data) throws Exception {
        try (Stream<Path> s = Files.list(data)) {
            return s.filter(p -> p.getFileName().toString().matches("log-[0-9a-f]{8}\\.hfl")).sorted().toList();
        }
    }

    private static Map<String, String> props(URI endpoint, S3ProxyFixture s3, String bucket) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("holdfast.store.backend", "s3");
        p.put("holdfast.store.s3.endpoint", endpoint.toString());
        p.put("holdfast.store.s3.bucket", bucket);
        p.put("holdfast.store.s3.prefix", "kill/");
        p.put("holdfast.store.s3.credentials-file", s3.settings("").credentialsFile().toString());
        p.put("holdfast.store.s3.node", "node-k");
        p.put("holdfast.store.log-roll-size", "128KB");
        p.put("holdfast.verify.schedule", "0");
        p.put("holdfast.verify.window", "0");
        return p;
    }

    @Test
    void killedBetweenPutAndConfirmation_uploadedOnceAfterRestart_offlineFsckFetches_everySnapshotRestores() throws Exception {
        byte[] first = image(1);
        byte[] second = first.clone();
        System.arraycopy(image(2), 0, second, 100 * BS, 128 * BS);
        Path a = Files.write(dir.resolve("a.img"), first);
        AgentProcess agent = new AgentProcess(logs);
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3")); SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            URI via = URI.create("http://127.0.0.1:" + proxy.port());
            try (ServerProcess server = ServerProcess.start(dir.resolve("server"), "sungem", props(via, s3, S3ProxyFixture.BUCKET), logs)) {
                Path state = Files.createDirectories(dir.resolve("state"));
                BackupSummary s1 = agent.backup(server, "vm", a, state);
                Path data = server.dataDir().resolve("data");
                int sealedFirst = logFiles(data).size() - 1;
                await().atMost(Duration.ofSeconds(60)).until(() -> metric(server, "holdfast_objects_logs_uploaded_total") >= sealedFirst);

                // the store refuses everything for a while: the second backup's logs stay unconfirmed
                proxy.failNext(1_000_000);
                Files.write(a, second);
                BackupSummary s2 = agent.backup(server, "vm", a, state);
                await().atMost(Duration.ofSeconds(60)).until(() -> metric(server, "holdfast_objects_logs_upload_failures_total") >= 1);
                server.close();
                proxy.failNext(0);
                List<Path> files = logFiles(data);
                List<Path> sealed = files.subList(0, files.size() - 1);
                assertThat(sealed.size()).as("the second backup sealed logs").isGreaterThan(sealedFirst);

                // the start resumes the pending uploads: the first PUT is stored, then the process dies
                server.armKillPoint(KillPoints.OBJECTS_UPLOAD_AFTER_PUT, 1);
                server.start();
                assertThat(server.awaitKillPoint(Duration.ofSeconds(120))).as("halted at objects.upload.afterPut\n%s",
                        server.diagnostics()).isTrue();

                server.start();
                await().atMost(Duration.ofSeconds(60)).until(() -> metric(server, "holdfast_objects_logs_uploaded_total")
                        >= sealed.size() - sealedFirst);
                assertThat(server.log()).doesNotContain("refusing to take it");
                try (S3ObjectStore direct = S3ObjectStore.connect(s3.settings("kill/"))) {
                    List<String> objects = direct.list("node-k/logs/");
                    assertThat(objects).as("one object per sealed log, the killed upload's not twice").hasSize(sealed.size());
                    for (Path p : sealed) {
                        String id = p.getFileName().toString().substring(4, 12);
                        String key = objects.stream().filter(k -> k.startsWith("node-k/logs/" + id + "-")).findFirst().orElseThrow();
                        assertThat(direct.size(key)).as(key).hasValue(Files.size(p));
                    }
                }
                server.close();

                for (Path p : sealed) {
                    Files.delete(p);
                }
                Path[] out = logs.next("offline-fsck");
                List<String> args = new ArrayList<>(List.of(server.dataDir().toString(), "--scratch-dir",
                        Files.createDirectories(dir.resolve("scratch")).toString()));
                props(s3.endpoint(), s3, S3ProxyFixture.BUCKET).forEach((k, v) -> {
                    if (k.startsWith("holdfast.store.") && !k.endsWith("log-roll-size")) {
                        args.add("--" + k + "=" + v);
                    }
                });
                Process fsck = ChildJvm.start("org.holdfast.server.gc.FsckTool", List.of("-Xmx256m"), ChildJvm.serverClasspath(), args,
                        out[0], out[1]);
                assertThat(fsck.waitFor(3, TimeUnit.MINUTES)).as("offline fsck finished").isTrue();
                String report = Files.readString(out[0], StandardCharsets.UTF_8) + Files.readString(out[1], StandardCharsets.UTF_8);
                assertThat(fsck.exitValue()).as(report).isZero();
                assertThat(report).containsPattern("data logs fetched from the object store: [1-9]");
                assertThat(logFiles(data)).as("the offline fsck wrote nothing into the data directory").doesNotContainAnyElementsOf(sealed);

                server.start();
                for (BackupSummary s : List.of(s1, s2)) {
                    Path restored = dir.resolve(s.snapshotId() + ".restored");
                    agent.restore(server, "vm", s.snapshotId(), restored);
                    assertThat(Files.readAllBytes(restored)).as("snapshot %s", s.snapshotId()).isEqualTo(s == s1 ? first : second);
                }
                JsonNode stats = new com.fasterxml.jackson.databind.ObjectMapper().readTree(server.get("/api/v1/stats").body());
                JsonNode o = stats.path("objectStore");
                assertThat(o.path("requests").path("get").asLong()).as(o.toString()).isPositive();
                assertThat(o.path("getBytes").asLong()).as(o.toString()).isPositive();
                assertThat(o.path("logsFetched").asLong()).as(o.toString()).isPositive();
            }
        }
    }

    @Test
    void bucketMissing_serverRefusesToStart_sayingWhatToDo() throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3"))) {
            assertThatThrownBy(() -> ServerProcess.start(dir.resolve("server"), "sungem", props(s3.endpoint(), s3, "no-such-bucket"), logs))
                    .hasMessageContaining("Holdfast cannot use its object store")
                    .hasMessageContaining("the bucket no-such-bucket does not exist")
                    .hasMessageContaining("Create the bucket");
        }
    }
}
