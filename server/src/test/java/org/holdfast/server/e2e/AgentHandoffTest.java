package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.client.cli.HoldfastAgent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One-shot {@code backup} and {@code restore} handed to a running {@code holdfast-agent daemon}
 * process over its control socket: a real server and a real daemon process; the commands' output and
 * exit codes come back, the daemon's log shows it ran them, the restore is byte-identical with the
 * caller's ownership and mode 0600, and {@code --no-daemon} runs in the caller's process.
 */
class AgentHandoffTest {
    private static final LogDir logs = new LogDir("AgentHandoffTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern HANDOFF_END = Pattern.compile("handoff: (\\w+) of volume vol ended with exit code (\\d+)");

    @TempDir
    Path work;

    @Test
    void backupAndRestore_handedToDaemon_andNoDaemonRunsHere() throws Exception {
        Path image = VolumeImage.generate(21, 4 << 20).writeTo(work.resolve("vol.img"));
        Path state = work.resolve("daemon-state");
        ServerProcess server = ServerProcess.start(work.resolve("server"), "sungem", logs);
        Path[] daemonOut = logs.next("daemon");
        Process daemon = null;
        try {
            Path config = Files.writeString(work.resolve("agent.yaml"), """
                    server: %s
                    trust: {fingerprint: "%s"}
                    token-file: %s
                    state-dir: %s
                    volumes:
                      - {name: other, source: %s, schedule: "0 0 1 1 *"}
                    """.formatted(server.ingestAddress(), server.fingerprint(), server.agentTokenFile(), state, image));
            daemon = ChildJvm.start(AgentProcess.MAIN_CLASS, List.of("-Xmx256m", "-XX:+UseSerialGC"), ChildJvm.agentClasspath(),
                    List.of("daemon", "--config", config.toString()), daemonOut[0], daemonOut[1]);
            Path socket = state.resolve("agent.sock");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(socket)) {
                assertThat(daemon.isAlive() && System.nanoTime() < deadline).as("daemon up\n" + ChildJvm.tail(daemonOut[0], 4000)
                        + ChildJvm.tail(daemonOut[1], 4000)).isTrue();
                Thread.sleep(200);
            }
            List<String> common = List.of("--socket", socket.toString(), "--verbose", "--server", server.ingestAddress(),
                    "--fingerprint", server.fingerprint().toString(), "--token-file", server.agentTokenFile().toString(),
                    "--known-servers", work.resolve("known-servers").toString(), "--volume", "vol");
            String stateDir = work.resolve("cli-state").toString();

            Cli full = cli(common, "backup", "--source", image.toString(), "--state-dir", stateDir);
            assertThat(full.exit).as(full.toString()).isZero();
            assertThat(full.out).startsWith("snapshot vol@1 committed (full backup");
            assertThat(full.err).contains("holdfast-agent: ran in the agent daemon on " + socket);
            assertThat(handoffs(daemonOut[0])).containsExactly("backup 0");

            overwrite(image, 1 << 20, 8192);
            Cli incr = cli(common, "backup", "--json", "--source", image.toString(), "--state-dir", stateDir);
            assertThat(incr.exit).as(incr.toString()).isZero();
            JsonNode r = JSON.readTree(incr.out);
            assertThat(r.path("snapshotId").asText()).isEqualTo("vol@2");
            assertThat(r.path("mode").asText()).isEqualTo("incremental");
            assertThat(r.path("changedBlocks").asLong()).isEqualTo(2);

            Path restored = work.resolve("restored.img");
            Cli restore = cli(common, "restore", "--snapshot", "latest", "--target", restored.toString());
            assertThat(restore.exit).as(restore.toString()).isZero();
            assertThat(restore.out).startsWith("restored vol@2 to " + restored);
            assertThat(Files.mismatch(image, restored)).as("byte-identical").isEqualTo(-1L);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(restored))).isEqualTo("rw-------");
            assertThat(Files.getOwner(restored).getName()).isEqualTo(System.getProperty("user.name"));

            // the daemon's exit code comes back: an existing target without --force is exit 2, said by the daemon
            Cli refused = cli(common, "restore", "--snapshot", "latest", "--target", restored.toString());
            assertThat(refused.exit).as(refused.toString()).isEqualTo(2);
            assertThat(refused.err).contains("holdfast-agent: error: ").contains("--force");
            assertThat(handoffs(daemonOut[0])).containsExactly("backup 0", "backup 0", "restore 0", "restore 2");

            // --no-daemon: this process does the work, the daemon sees nothing
            overwrite(image, 3 << 20, 4096);
            Cli local = cli(common, "backup", "--no-daemon", "--source", image.toString(), "--state-dir", stateDir);
            assertThat(local.exit).as(local.toString()).isZero();
            assertThat(local.out).startsWith("snapshot vol@3 committed (incremental backup");
            assertThat(local.err).doesNotContain("agent daemon");
            Path again = work.resolve("again.img");
            Cli localRestore = cli(common, "restore", "--no-daemon", "--snapshot", "vol@3", "--target", again.toString());
            assertThat(localRestore.exit).as(localRestore.toString()).isZero();
            assertThat(Files.mismatch(image, again)).isEqualTo(-1L);
            assertThat(handoffs(daemonOut[0])).as("nothing more handed over").hasSize(4);
        } finally {
            if (daemon != null) {
                daemon.destroy();
                assertThat(daemon.waitFor(30, TimeUnit.SECONDS)).as("daemon stopped on SIGTERM").isTrue();
            }
            server.close();
        }
    }

    private record Cli(int exit, String out, String err) {
    }

    private static Cli cli(List<String> common, String command, String... args) {
        List<String> a = new ArrayList<>(List.of(command));
        a.addAll(common);
        a.addAll(List.of(args));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = HoldfastAgent.run(a.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Cli(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** "COMMAND EXIT" for each handed-off command the daemon's log says ended. */
    private static List<String> handoffs(Path daemonLog) {
        List<String> found = new ArrayList<>();
        Matcher m = HANDOFF_END.matcher(ChildJvm.tail(daemonLog, 1 << 20));
        while (m.find()) {
            found.add(m.group(1) + " " + m.group(2));
        }
        return found;
    }

    private static void overwrite(Path image, long offset, int length) throws Exception {
        byte[] b = new byte[length];
        new java.util.Random(offset).nextBytes(b);
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(b), offset);
        }
    }
}
