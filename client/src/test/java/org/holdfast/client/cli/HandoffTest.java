package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.client.cli.DaemonCommandsTest.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.client.daemon.AgentConfig;
import org.holdfast.client.daemon.AgentDaemon;
import org.holdfast.client.daemon.CronSchedule;
import org.holdfast.client.daemon.DaemonLog;
import org.holdfast.client.daemon.HandoffClient;
import org.holdfast.client.daemon.HandoffRunner;
import org.holdfast.client.daemon.RunReporter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code backup} and {@code restore} handed to a running daemon over its socket: framing, exit code, what is sent, refusals. */
class HandoffTest {
    @TempDir
    Path dir;

    private AgentDaemon daemon;
    private final ByteArrayOutputStream daemonLog = new ByteArrayOutputStream();

    /** What the daemon was asked to run. */
    private record Call(List<String> args, String token) {
    }

    private final List<Call> calls = new CopyOnWriteArrayList<>();

    /** Prints a line to stdout, a partial line to stderr, and exits 4, like a backup the server rejected. */
    private final HandoffRunner recording = (args, token, out, err) -> {
        calls.add(new Call(args, token));
        out.println("from the daemon: " + args.get(0));
        out.println("second line ü");
        err.print("holdfast-agent: error: rejected");
        err.flush();
        return 4;
    };

    private Path start(HandoffRunner runner) {
        AgentConfig c = new AgentConfig("127.0.0.1:1", new AgentConfig.Trust(null, null, true), null, dir.resolve("state"),
                new AgentConfig.Retry(1, Duration.ZERO, Duration.ZERO),
                List.of(new AgentConfig.VolumeConfig("v", dir.resolve("img"), 0, CronSchedule.parse("0 0 1 1 *"), null, null, false)));
        daemon = new AgentDaemon(c, (config, volume) -> {
            throw new AssertionError("no scheduled run expected");
        }, RunReporter.NONE, runner, new DaemonLog(new PrintStream(daemonLog, true, StandardCharsets.UTF_8)), "test");
        daemon.start();
        return c.socket();
    }

    @AfterEach
    void stop() {
        if (daemon != null) {
            daemon.close();
        }
    }

    @Test
    void backup_daemonRunning_handedOverOutputAndExitCodeRelayed() {
        Path socket = start(recording);
        DaemonCommandsTest.Run r = cli("backup", "--socket", socket.toString(), "--server", "127.0.0.1:1", "--no-tls", "--volume", "v",
                "--source", "rel/disk.img", "--threads", "2", "--token", "s3cret", "--read-holes");
        assertThat(r.exit()).as(r.err()).isEqualTo(4);
        assertThat(r.out()).isEqualTo("from the daemon: backup\nsecond line ü\n");
        assertThat(r.err()).isEqualTo("holdfast-agent: error: rejected");
        assertThat(calls).hasSize(1);
        Call call = calls.get(0);
        assertThat(call.token).as("the token travels beside the arguments").isEqualTo("s3cret");
        assertThat(String.join(" ", call.args)).doesNotContain("s3cret").doesNotContain("--socket")
                .startsWith("backup ")
                .contains("--source " + Path.of("rel/disk.img").toAbsolutePath(), "--threads 2", "--read-holes", "--no-tls",
                        "--volume v", "--state-dir /");
        assertThat(daemonLog.toString(StandardCharsets.UTF_8)).contains("handoff: backup of volume v from a CLI in "
                + Path.of("").toAbsolutePath()).contains("handoff: backup of volume v ended with exit code 4");
    }

    @Test
    void restore_noDaemonOption_runsInThisProcess() {
        Path socket = start(recording);
        DaemonCommandsTest.Run r = cli("restore", "--no-daemon", "--socket", socket.toString(), "--server", "127.0.0.1:1", "--no-tls",
                "--volume", "v", "--snapshot", "latest", "--target", dir.resolve("out.img").toString());
        assertThat(r.exit()).as(r.err()).isEqualTo(3); // nothing listens on port 1: this process tried the server itself
        assertThat(calls).isEmpty();
    }

    @Test
    void restore_daemonWithoutHandoff_runsHereSayingWhy() {
        Path socket = start(null);
        DaemonCommandsTest.Run r = cli("restore", "--verbose", "--socket", socket.toString(), "--server", "127.0.0.1:1", "--no-tls",
                "--volume", "v", "--snapshot", "latest", "--target", dir.resolve("out.img").toString());
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.err()).contains("holdfast-agent: running in this process: the agent daemon refused the handoff:"
                + " unknown command 'exec'");
    }

    @Test
    void socketOfAnotherUser_notHandedOver() {
        Path socket = start(recording);
        HandoffClient.Outcome o = HandoffClient.exec(socket, "not-" + System.getProperty("user.name"),
                Map.of("command", "exec", "args", List.of("backup")), System.out, System.err);
        assertThat(o.handed()).isFalse();
        assertThat(o.reason()).isEqualTo("the agent daemon socket " + socket + " belongs to " + System.getProperty("user.name")
                + ", not to not-" + System.getProperty("user.name"));
        assertThat(calls).as("never sent").isEmpty();
    }

    @Test
    void noSocket_runsHereSayingWhy() {
        Path socket = dir.resolve("none.sock");
        DaemonCommandsTest.Run r = cli("backup", "--socket", socket.toString(), "--server", "127.0.0.1:1", "--no-tls", "--volume", "v",
                "--source", dir.resolve("img").toString());
        assertThat(r.exit()).isIn(3, 5);
        assertThat(r.err()).contains("holdfast-agent: running in this process: no agent daemon socket at " + socket);
        assertThat(Files.exists(socket)).isFalse();
    }

    @Test
    void inProcessCommand_onlyBackupAndRestore() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new InProcessCommand().run(List.of("daemon", "--config", "/x"), null, System.out,
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("runs only backup and restore for a CLI, not daemon");
    }
}
