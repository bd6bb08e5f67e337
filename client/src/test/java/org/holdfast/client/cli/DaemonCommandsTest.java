package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.client.daemon.AgentConfig;
import org.holdfast.client.daemon.CronSchedule;
import org.holdfast.client.daemon.RunRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The daemon's subcommands at the command line: config checks, no daemon to talk to, and how a backup is delegated. */
class DaemonCommandsTest {
    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {
    }

    static Run cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = HoldfastAgent.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void daemonCheck_badConfig_exit2WithEveryProblemAndNoDaemon() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), """
                server: 127.0.0.1:7070
                trust: {no-tls: true}
                state-dir: %s
                volumes:
                  - name: a
                    source: /img/a
                    schedule: "0 2 * * * * *"
                """.formatted(dir.resolve("state")));
        Run r = cli("daemon", "--check", "--config", config.toString());
        assertThat(r.exit).isEqualTo(2);
        assertThat(r.err).startsWith("holdfast-agent: error: config " + config + " has 1 error:\n")
                .contains("  line 7, volumes[0].schedule: expected 5 fields (minute hour day-of-month month day-of-week) or 6"
                        + " (second first), found 7 in '0 2 * * * * *'");
        assertThat(dir.resolve("state")).as("nothing started").doesNotExist();
    }

    @Test
    void daemonCheck_goodConfig_summaryExit0() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), """
                server: 127.0.0.1:7070
                trust: {no-tls: true}
                state-dir: /var/lib/holdfast-agent
                volumes:
                  - {name: a, source: /img/a, schedule: "@daily"}
                """);
        Run r = cli("daemon", "--check", "--config", config.toString());
        assertThat(r.exit).as(r.err).isZero();
        assertThat(r.out).isEqualTo("config " + config + " is valid: server 127.0.0.1:7070, 1 volume(s), state directory"
                + " /var/lib/holdfast-agent\n");
    }

    @Test
    void status_noDaemon_exit3NamingTheSocket() {
        Path socket = dir.resolve("agent.sock");
        Run r = cli("status", "--socket", socket.toString());
        assertThat(r.exit).isEqualTo(3);
        assertThat(r.err).startsWith("holdfast-agent: error: no agent daemon socket at " + socket + " (start the daemon");
    }

    @Test
    void statusDescribe_sparseRun_scannedAndReadSaidApart() throws Exception {
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        RunRecord sparse = new RunRecord("v", "schedule", "2026-01-01T00:00:00Z", "2026-01-01T00:00:02Z", RunRecord.SUCCEEDED, 1,
                "v@2", 512L << 20, 3L << 20, 0, null, null, "snapshot v@2 committed (full)", 5L << 20);
        assertThat(StatusCommand.describe(json.valueToTree(sparse))).isEqualTo("succeeded, 2026-01-01T00:00:00Z to"
                + " 2026-01-01T00:00:02Z, snapshot v@2 committed (full), scanned 512.0 MiB (read 5.0 MiB), sent 3.0 MiB");
        // a run log line written before sourceBytesRead existed: only what it knows
        var old = json.readTree("{\"result\":\"succeeded\",\"start\":\"a\",\"end\":\"b\",\"message\":\"m\","
                + "\"bytesRead\":1048576,\"bytesSent\":0}");
        assertThat(StatusCommand.describe(old)).isEqualTo("succeeded, a to b, m, scanned 1.0 MiB, sent 0 B");
    }

    @Test
    void runNow_noVolume_usageError() {
        Run r = cli("run-now", "--socket", dir.resolve("agent.sock").toString());
        assertThat(r.exit).isEqualTo(2);
        assertThat(r.err).contains("name one volume: run-now VOLUME");
    }

    @Test
    void inProcessBackup_arguments_areTheBackupCommandsOptions() {
        AgentConfig c = new AgentConfig("h:7070", new AgentConfig.Trust(null, Path.of("/etc/ca.pem"), false), Path.of("/etc/tok"),
                Path.of("/var/lib/a"), new AgentConfig.Retry(1, Duration.ZERO, Duration.ZERO),
                List.of(new AgentConfig.VolumeConfig("v", Path.of("/dev/x"), 65536, CronSchedule.parse("@daily"), null, null, true)));
        assertThat(String.join(" ", InProcessBackup.arguments(c, c.volume("v")))).isEqualTo("backup --json --no-daemon --server h:7070"
                + " --volume v --known-servers /var/lib/a/known-servers --ca-cert /etc/ca.pem --token-file /etc/tok"
                + " --source /dev/x --state-dir /var/lib/a/volumes --block-size 65536 --dirty-bitmap");
    }

    @Test
    void inProcessBackup_volumeWithPreHook_backsUpApplicationConsistent() {
        AgentConfig c = new AgentConfig("h:7070", new AgentConfig.Trust(null, null, true), null,
                Path.of("/var/lib/a"), new AgentConfig.Retry(1, Duration.ZERO, Duration.ZERO),
                List.of(new AgentConfig.VolumeConfig("v", Path.of("/dev/x"), 0, CronSchedule.parse("@daily"),
                        new AgentConfig.Hook("fsfreeze -f /srv", Duration.ofSeconds(5)), null, false)));
        assertThat(String.join(" ", InProcessBackup.arguments(c, c.volume("v")))).endsWith(" --consistency application");
    }

    @Test
    void inProcessRunReport_arguments_carryTheRunAndItsConsistency() {
        AgentConfig c = new AgentConfig("h:7070", new AgentConfig.Trust(null, null, true), null,
                Path.of("/var/lib/a"), new AgentConfig.Retry(1, Duration.ZERO, Duration.ZERO),
                List.of(new AgentConfig.VolumeConfig("v", Path.of("/dev/x"), 0, CronSchedule.parse("@daily"), null, null, false)));
        RunRecord ok = new RunRecord("v", "schedule", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", RunRecord.SUCCEEDED, 1,
                "v@3", 10, 5, 0, null, null, "snapshot v@3 committed (full)", 10L);
        assertThat(String.join(" ", InProcessRunReport.arguments(c, c.volume("v"), ok))).startsWith("report-run --server h:7070 --volume v")
                .contains("--result succeeded").contains("--consistency crash").endsWith("--snapshot v@3");
        RunRecord failed = new RunRecord("v", "run-now", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", RunRecord.FAILED, 0,
                null, 0, 0, 5, "exit 1", null, "pre hook failed (exit 1); backup skipped", null);
        assertThat(String.join(" ", InProcessRunReport.arguments(c, c.volume("v"), failed))).contains("--result failed")
                .contains("--exit-code 5").contains("--consistency unknown").doesNotContain("--snapshot");
    }
}
