package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.e2e.ObjectStoreE2eTest.image;
import static org.holdfast.server.e2e.ObjectStoreE2eTest.logFiles;
import static org.holdfast.server.e2e.ObjectStoreE2eTest.metric;

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
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.holdfast.common.ports.TestPorts;
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
 * lost. Killed (SIGKILL) while a PUT is held in flight, the next start makes it once. Then the
 * offline fsck on the stopped server, its sealed logs wiped, fetches them from the
 * object store and is clean without writing into the data directory; every snapshot restores
 * byte-identical. And a server whose bucket does not exist refuses to start, saying so.
 */
class ObjectStoreUploadKillTest {
    private static final LogDir logs = new LogDir("ObjectStoreUploadKillTest");
    private static final int BS = 4096;

    @TempDir
    Path dir;

    /** Runs the offline fsck in its own JVM on the stopped server's data directory, with the store at {@code endpoint}. */
    private FsckRun offlineFsck(ServerProcess server, URI endpoint, S3ProxyFixture s3, String name) throws Exception {
        Path[] out = logs.next(name);
        List<String> args = new ArrayList<>(List.of("fsck", server.dataDir().toString(), "--scratch-dir",
                Files.createDirectories(dir.resolve("scratch")).toString()));
        props(endpoint, s3, S3ProxyFixture.BUCKET).forEach((k, v) -> {
            if (k.startsWith("holdfast.store.") && !k.endsWith("log-roll-size")) {
                args.add("--" + k + "=" + v);
            }
        });
        Process p = ChildJvm.start("org.holdfast.server.app.HoldfastServer", List.of("-Xmx256m"), ChildJvm.serverClasspath(), args, out[0],
                out[1]);
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("offline fsck finished").isTrue();
        return new FsckRun(p.exitValue(), Files.readString(out[0], StandardCharsets.UTF_8)
                + Files.readString(out[1], StandardCharsets.UTF_8));
    }

    private record FsckRun(int exit, String output) {
    }

    private static int logId(Path log) {
        return Integer.parseInt(log.getFileName().toString().substring(4, 12), 16);
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
                await().atMost(Duration.ofSeconds(60)).until(() -> metric(server, "holdfast_objects_logs_upload_failures_total")
                        >= 1);
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

                // SIGKILL while a PUT is in flight (held in the proxy): the store never got it, the next start makes it again
                byte[] third = second.clone();
                System.arraycopy(image(3), 0, third, 300 * BS, 128 * BS);
                Files.write(a, third);
                proxy.faults(new SlowDownProxy.Faults(0, 0, 0, 1.0, Duration.ofSeconds(30), 3));
                BackupSummary s3rd = agent.backup(server, "vm", a, state);
                await().atMost(Duration.ofSeconds(60)).until(() -> proxy.delays() > 0);
                assertThat(server.kill()).as("SIGKILL during the upload").isTrue();
                proxy.faults(null);

                for (Path p : sealed) {
                    Files.delete(p); // confirmed uploads: the offline fsck and the restores fetch them back
                }

                int closedPort = TestPorts.claim(); // claimed: no test JVM listens there
                FsckRun down = offlineFsck(server, URI.create("http://127.0.0.1:" + closedPort), s3, "offline-fsck-store-down");
                assertThat(down.exit()).as("an unreachable store: fsck could not run, no data loss claimed\n%s", down.output())
                        .isEqualTo(3);
                assertThat(down.output()).contains("fsck could not run").contains("failed after").doesNotContain("result: DATA LOSS");
                FsckRun fsck = offlineFsck(server, s3.endpoint(), s3, "offline-fsck");
                String report = fsck.output();
                assertThat(fsck.exit()).as(report).isZero();
                assertThat(report).containsPattern("read from the object store: [1-9][0-9]* GETs");
                assertThat(logFiles(data)).as("the offline fsck wrote nothing into the data directory")
                        .doesNotContainAnyElementsOf(sealed);

                server.start();
                List<Path> all = logFiles(data);
                int newest = logId(all.get(all.size() - 1));
                int pending = newest - 1 - logId(sealed.get(sealed.size() - 1)); // the third backup's sealed logs
                assertThat(pending).isPositive();
                await().atMost(Duration.ofSeconds(60)).until(() -> metric(server, "holdfast_objects_logs_uploaded_total") >= pending);
                try (S3ObjectStore direct = S3ObjectStore.connect(s3.settings("kill/"))) {
                    List<Integer> ids = direct.list("node-k/logs/").stream().map(k -> Integer.parseInt(k.substring(12, 20), 16)).toList();
                    assertThat(ids).as("every sealed log once, the upload killed in flight too")
                            .containsExactlyInAnyOrderElementsOf(IntStream.range(1, newest).boxed().toList());
                }
                // every snapshot over the wire (one connection, each block checked against its fingerprint), its wiped logs
                // fetched from the store; the agent itself restores the newest: a JVM per snapshot proved nothing more
                Map<String, Path> expected = new LinkedHashMap<>();
                expected.put(s1.snapshotId(), Files.write(dir.resolve("expected-1.img"), first));
                expected.put(s2.snapshotId(), Files.write(dir.resolve("expected-2.img"), second));
                expected.put(s3rd.snapshotId(), Files.write(dir.resolve("expected-3.img"), third));
                RestoreCheck.assertRestoreOverTheWire(server, "vm", expected);
                Path restored = dir.resolve(s3rd.snapshotId() + ".restored");
                agent.restore(server, "vm", s3rd.snapshotId(), restored);
                assertThat(Files.readAllBytes(restored)).as("snapshot %s", s3rd.snapshotId()).isEqualTo(third);
                JsonNode stats = new com.fasterxml.jackson.databind.ObjectMapper().readTree(server.get("/api/v1/stats").body());
                JsonNode o = stats.path("objectStore");
                assertThat(o.path("requests").path("get").asLong()).as(o.toString()).isPositive();
                assertThat(o.path("getBytes").asLong()).as(o.toString()).isPositive();
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
