package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Volume;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The server's Docker image, run by Testcontainers as an operator would (docs/operations.md,
 * "Install with Docker"): an agent token made offline before the first start, the server healthy by
 * the image's own health check, running as a non-root user with the JAVA_OPTS it was given; a host
 * agent backs up an image into it over TLS, the container is replaced by a new one on the same data
 * volume (an upgrade or a restart), and the snapshot restores byte-identical from the new one.
 */
class ServerImageIT {
    private static final String DATA = "/var/lib/holdfast";
    private final LogDir logs = new LogDir("ServerImageIT");

    @TempDir
    Path work;

    @Test
    void serverImage_backupThenNewContainerOnTheSameVolume_restoresByteIdentical() throws Exception {
        DockerHost.requireImages();
        String volume = "holdfast-it-" + Long.toHexString(new Random().nextLong() & Long.MAX_VALUE);
        DockerHost.check(DockerHost.run(Duration.ofSeconds(30), "docker", "volume", "create", volume), "docker volume create");
        try {
            // the documented first step: an agent token, offline, on the empty data volume
            String made = DockerHost.check(DockerHost.run(Duration.ofMinutes(2), "docker", "run", "--rm", "-v", volume + ":" + DATA,
                    DockerHost.SERVER_IMAGE, "create-token", "--data-dir", DATA, "--name", "host-agent", "--role", "agent"), "create-token");
            String token = made.lines().filter(l -> l.startsWith("hft_")).findFirst()
                    .orElseThrow(() -> new AssertionError("create-token printed no token:\n" + made));
            Path tokenFile = work.resolve("agent-token");
            Files.writeString(Files.createFile(tokenFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))),
                    token + "\n", StandardCharsets.UTF_8);

            VolumeImage image = VolumeImage.generate(42, 24 << 20).scribble(40);
            Path source = image.writeTo(work.resolve("disk.img"));
            Path cert = work.resolve("server.crt");
            AgentProcess agent = new AgentProcess(logs);
            String snapshot;
            try (GenericContainer<?> server = server(volume)) {
                server.start();
                ExecResult uid = server.execInContainer("id", "-u");
                assertThat(uid.getStdout().strip()).as("the server runs as the image's holdfast user, not root").isEqualTo("10001");
                ExecResult cmdline = server.execInContainer("sh", "-c", "tr '\\0' ' ' < /proc/1/cmdline");
                assertThat(cmdline.getStdout()).as("JAVA_OPTS reaches the JVM").contains("-Xmx384m");
                ExecResult password = server.execInContainer("cat", DATA + "/initial-admin-password");
                assertThat(password.getExitCode()).as("the first admin password is in the data volume").isZero();
                assertThat(password.getStdout().strip()).hasSizeGreaterThan(12);
                server.copyFileFromContainer(DATA + "/tls/server.crt", cert.toString());

                AgentResult backup = agent.run("backup", "--server", "127.0.0.1:" + server.getMappedPort(7070), "--volume", "demo",
                        "--source", source.toString(), "--state-dir", work.resolve("state").toString(), "--json",
                        "--ca-cert", cert.toString(), "--token-file", tokenFile.toString());
                assertThat(backup.exitCode()).as("backup into the container:\n%s\n%s", backup, server.getLogs()).isZero();
                snapshot = BackupSummary.parse(backup).snapshotId();
            }
            try (GenericContainer<?> again = server(volume)) {
                again.start();
                Path restored = work.resolve("restored.img");
                AgentResult restore = agent.run("restore", "--server", "127.0.0.1:" + again.getMappedPort(7070), "--volume", "demo",
                        "--snapshot", snapshot, "--target", restored.toString(), "--json",
                        "--ca-cert", cert.toString(), "--token-file", tokenFile.toString());
                assertThat(restore.exitCode()).as("restore from the new container:\n%s\n%s", restore, again.getLogs()).isZero();
                assertThat(Files.mismatch(source, restored)).as("restored bytes differ from the source at").isEqualTo(-1L);
            }
        } finally {
            DockerHost.run(Duration.ofSeconds(30), "docker", "volume", "rm", "-f", volume);
        }
    }

    /** The server image on the named data volume, JAVA_OPTS set, healthy by the image's HEALTHCHECK. */
    private static GenericContainer<?> server(String volume) {
        return new GenericContainer<>(DockerImageName.parse(DockerHost.SERVER_IMAGE))
                .withEnv("JAVA_OPTS", "-Xmx384m -XX:+UseSerialGC")
                .withExposedPorts(8080, 7070)
                .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig().withBinds(new Bind(volume, new Volume(DATA))))
                .waitingFor(Wait.forHealthcheck().withStartupTimeout(Duration.ofMinutes(3)));
    }
}
