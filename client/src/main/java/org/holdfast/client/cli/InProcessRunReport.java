package org.holdfast.client.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.daemon.AgentConfig;
import org.holdfast.client.daemon.RunRecord;
import org.holdfast.client.daemon.RunReporter;

/**
 * The daemon's run reports are {@code holdfast-agent report-run}, run inside the daemon's JVM with the
 * connection options its backups use. The consistency reported is {@code application} for a committed
 * run of a volume with a pre hook (the run only reaches its backup when that hook succeeded),
 * {@code crash} for one without, {@code unknown} when nothing committed.
 */
final class InProcessRunReport implements RunReporter {
    @Override
    public String report(AgentConfig config, RunRecord run) {
        AgentConfig.VolumeConfig volume = config.volume(run.volume());
        if (volume == null) {
            return "volume " + run.volume() + " is no longer in the config";
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HoldfastAgent.run(arguments(config, volume, run), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return code == 0 ? null : InProcessBackup.errorLine(err.toString(StandardCharsets.UTF_8), code);
    }

    static String[] arguments(AgentConfig config, AgentConfig.VolumeConfig volume, RunRecord run) {
        List<String> a = new ArrayList<>(List.of("report-run"));
        a.addAll(InProcessBackup.connectionArguments(config, volume));
        a.addAll(List.of("--trigger", run.trigger(), "--start", run.start(), "--end", run.end() == null ? run.start() : run.end(),
                "--result", run.result(), "--exit-code", String.valueOf(run.exitCode()), "--attempts", String.valueOf(run.attempts()),
                "--bytes-read", String.valueOf(run.bytesRead()), "--bytes-sent", String.valueOf(run.bytesSent()),
                "--consistency", run.snapshot() == null ? "unknown" : volume.preHook() != null ? "application" : "crash",
                "--message", run.message() == null ? "" : run.message()));
        if (run.snapshot() != null) {
            a.addAll(List.of("--snapshot", run.snapshot()));
        }
        return a.toArray(String[]::new);
    }
}
