package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.holdfast.common.ports.TestPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docker/compose.yml brought up by the steps docs/operations.md gives ("Install with docker compose"):
 * the agent token made offline before the first start, the server started and healthy, its
 * certificate handed to the agent as a secret, then the agent daemon, which starts only once the
 * server is healthy and backs up an image file on its schedule; the scheduled snapshots are observed
 * through the REST API with the first admin password. Uses docker-compose on the machine's daemon.
 */
class ComposeIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path project;

    @Test
    void compose_serverAndScheduledAgent_snapshotsAppearInTheApi() throws Exception {
        DockerHost.requireImages();
        org.junit.jupiter.api.Assumptions.assumeTrue(DockerHost.run(Duration.ofSeconds(20), "docker-compose", "version").exit() == 0,
                "docker-compose is not installed (.ci/run installs it)");
        String name = "holdfastit" + Long.toHexString(System.nanoTime());
        int https = TestPorts.claim();
        int agentPort = TestPorts.claim();
        Files.copy(DockerHost.repo().resolve("docker/compose.yml"), project.resolve("compose.yml"));
        Files.createDirectories(project.resolve("images"));
        Files.createDirectories(project.resolve("secrets"));
        VolumeImage.generate(7, 8 << 20).scribble(20).writeTo(project.resolve("images/disk.img"));
        Files.setPosixFilePermissions(project.resolve("images/disk.img"), PosixFilePermissions.fromString("rw-r--r--"));
        // every 5 seconds (the optional seconds field), so the test sees scheduled runs
        Files.writeString(project.resolve("agent.yaml"), Files.readString(DockerHost.repo().resolve("docker/agent.example.yaml"))
                .replace("schedule: \"0 2 * * *\"", "schedule: \"*/5 * * * * *\""));
        // compose checks every secret file of every service, even for `run server`: the certificate's placeholder until step 2
        Files.createFile(project.resolve("secrets/server.crt"));
        try {
            String made = compose(https, agentPort, name, "run", "--rm", "--no-deps", "server",
                    "create-token", "--data-dir", "/var/lib/holdfast", "--name", "compose-agent", "--role", "agent");
            String token = made.lines().filter(l -> l.startsWith("hft_")).findFirst()
                    .orElseThrow(() -> new AssertionError("create-token printed no token:\n" + made));
            secret("agent-token", token + "\n");

            compose(https, agentPort, name, "up", "-d", "server");
            String server = compose(https, agentPort, name, "ps", "-q", "server").strip();
            awaitHealthy(server);
            DockerHost.check(DockerHost.run(Duration.ofSeconds(30), "docker", "cp", server + ":/var/lib/holdfast/tls/server.crt",
                    project.resolve("secrets/server.crt").toString()), "docker cp server.crt");
            Files.setPosixFilePermissions(project.resolve("secrets/server.crt"), PosixFilePermissions.fromString("rw-r--r--"));
            chownToAgent("agent-token");

            compose(https, agentPort, name, "up", "-d");
            String password = DockerHost.check(DockerHost.run(Duration.ofSeconds(30), "docker", "exec", server,
                    "cat", "/var/lib/holdfast/initial-admin-password"), "reading the first admin password").strip();
            HttpClient http = HttpClient.newBuilder().sslContext(trusting(project.resolve("secrets/server.crt")))
                    .connectTimeout(Duration.ofSeconds(5)).build();
            String base = "https://127.0.0.1:" + https;
            String session = JSON.readTree(send(http, HttpRequest.newBuilder(URI.create(base + "/api/v1/auth/login"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("username", "admin").put("password", password).toString()))
                    .build(), 200)).get("token").asText();
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            int snapshots = 0;
            String last = "";
            while (snapshots < 2 && System.nanoTime() < deadline) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/api/v1/volumes/demo/snapshots"))
                        .header("Authorization", "Bearer " + session).GET().build(), HttpResponse.BodyHandlers.ofString());
                last = r.statusCode() + " " + r.body();
                if (r.statusCode() == 200) {
                    JsonNode body = JSON.readTree(r.body());
                    JsonNode list = body.isArray() ? body : body.path("snapshots");
                    snapshots = list.size();
                }
                Thread.sleep(1000);
            }
            assertThat(snapshots).as("scheduled snapshots of demo seen through the API (last answer %s)\nagent log:\n%s", last,
                    compose(https, agentPort, name, "logs", "--no-color", "agent")).isGreaterThanOrEqualTo(2);
        } finally {
            DockerHost.run(Duration.ofMinutes(2), project, composeCommand(https, agentPort, name, "down", "-v", "--remove-orphans"));
        }
    }

    private void secret(String file, String content) throws Exception {
        Path p = project.resolve("secrets").resolve(file);
        Files.writeString(Files.createFile(p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--------"))),
                content, StandardCharsets.UTF_8);
    }

    /** The agent's container user (uid 10002) must read the token bind-mounted as a secret; nobody else may. */
    private void chownToAgent(String file) {
        DockerHost.check(DockerHost.run(Duration.ofSeconds(10), "chown", "10002", project.resolve("secrets").resolve(file).toString()),
                "chown of the token");
    }

    private String compose(int https, int agentPort, String name, String... args) {
        return DockerHost.check(DockerHost.run(Duration.ofMinutes(5), project, composeCommand(https, agentPort, name, args)),
                "docker-compose " + String.join(" ", args));
    }

    private List<String> composeCommand(int https, int agentPort, String name, String... args) {
        List<String> c = new ArrayList<>(List.of("env", "HOLDFAST_HTTPS_PORT=" + https, "HOLDFAST_AGENT_PORT=" + agentPort,
                "HOLDFAST_SERVER_JAVA_OPTS=-Xmx384m", "docker-compose", "-p", name, "-f", project.resolve("compose.yml").toString()));
        c.addAll(List.of(args));
        return c;
    }

    private static void awaitHealthy(String container) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        String status = "";
        while (System.nanoTime() < deadline) {
            status = DockerHost.run(Duration.ofSeconds(10), "docker", "inspect", "-f", "{{.State.Health.Status}}", container).output().strip();
            if (status.equals("healthy")) {
                return;
            }
            Thread.sleep(1000);
        }
        throw new AssertionError("server container not healthy after 3 minutes: " + status + "\n"
                + DockerHost.run(Duration.ofSeconds(10), "docker", "logs", "--tail", "80", container).output());
    }

    private static String send(HttpClient http, HttpRequest request, int expected) throws Exception {
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s %s: %s", request.method(), request.uri(), r.body()).isEqualTo(expected);
        return r.body();
    }

    private static SSLContext trusting(Path certificate) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(certificate)) {
            ks.setCertificateEntry("holdfast", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }
}
