package org.holdfast.client.cli;

import java.time.Instant;
import java.util.concurrent.Callable;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.common.protocol.RunRecorded;
import org.holdfast.common.protocol.RunReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code report-run} (hidden): tells the server how one run of the daemon's backup of --volume ended
 * (RUN_REPORT, protocol version 3). The daemon runs it in its own JVM after every run, the way it runs
 * {@code backup}; the options are a run-log record's fields.
 */
@Command(name = "report-run", hidden = true, mixinStandardHelpOptions = true,
        description = "Report a finished daemon run of --volume to the server (used by the daemon).")
final class ReportRunCommand extends HoldfastAgent.Subcommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Option(names = "--trigger", defaultValue = "schedule", description = "schedule, run-now or restart.")
    String trigger;

    @Option(names = "--start", required = true, paramLabel = "ISO-8601", description = "When the run began.")
    String start;

    @Option(names = "--end", required = true, paramLabel = "ISO-8601", description = "When it ended.")
    String end;

    @Option(names = "--result", required = true, description = "succeeded, failed or interrupted.")
    String result;

    @Option(names = "--exit-code", defaultValue = "0", description = "The agent exit code of the run's last try.")
    int exitCode;

    @Option(names = "--attempts", defaultValue = "0", description = "Backup tries made.")
    int attempts;

    @Option(names = "--bytes-read", defaultValue = "0")
    long bytesRead;

    @Option(names = "--bytes-sent", defaultValue = "0")
    long bytesSent;

    @Option(names = "--snapshot", paramLabel = "VOLUME@SEQ", description = "The snapshot the run committed, if any.")
    String snapshot;

    @Option(names = "--consistency", defaultValue = "unknown", description = "crash, application or unknown.")
    String consistency;

    @Option(names = "--message", defaultValue = "", description = "What happened, in a sentence.")
    String message;

    @Override
    public Integer call() {
        RunReport report = report();
        Output o = new Output(out, err, conn.json);
        try (ServerConnection c = conn.open(o::notice)) {
            if (c.protocolVersion() < 3) {
                throw new AgentException(ExitCode.REJECTED, "the server at " + c.address() + " speaks protocol version "
                        + c.protocolVersion() + ", which cannot record daemon runs", "upgrade the server; the run log keeps the runs");
            }
            c.send(report);
            c.expect(RunRecorded.class, ConnectionOptions.HELLO_TIMEOUT);
        }
        if (conn.json) {
            o.json(java.util.Map.of("recorded", true, "volume", report.volume()));
        } else {
            out.println("run of " + report.volume() + " from " + start + " recorded by the server");
        }
        return 0;
    }

    private RunReport report() {
        RunReport.Result r = RunReport.Result.fromName(result);
        if (r == null) {
            throw usage("--result " + result + " is not a run result", "give succeeded, failed or interrupted");
        }
        Consistency kind = Consistency.fromName(consistency);
        if (kind == null) {
            throw usage("--consistency " + consistency + " is not a consistency", "give crash, application or unknown");
        }
        long seq = 0;
        if (snapshot != null && !snapshot.isBlank()) {
            try {
                seq = SnapshotId.parse(snapshot, new VolumeId(conn.volume())).sequence();
            } catch (IllegalArgumentException e) {
                throw usage("--snapshot: " + e.getMessage(), "give the snapshot the run committed as volume@sequence");
            }
        }
        try {
            return RunReport.cut(conn.volume(), trigger, millis("--start", start), millis("--end", end), r,
                    Math.max(0, Math.min(255, exitCode)), Math.max(0, attempts), bytesRead, bytesSent, seq, kind, message);
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage(), "check the run's fields");
        }
    }

    private static long millis(String option, String iso) {
        try {
            return Instant.parse(iso).toEpochMilli();
        } catch (java.time.format.DateTimeParseException e) {
            throw usage(option + " " + iso + " is not an ISO-8601 instant", "give a time like 2026-01-31T02:00:00Z");
        }
    }

    private static AgentException usage(String what, String next) {
        return new AgentException(ExitCode.USAGE, what, next);
    }
}
