package org.holdfast.client.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.ExitCode;
import org.holdfast.client.daemon.AgentConfig;
import org.holdfast.client.daemon.BackupOutcome;
import org.holdfast.client.daemon.VolumeBackup;

/**
 * The daemon's backups are exactly {@code holdfast-agent backup --json}, run inside the daemon's JVM:
 * the same options, state files, trust and exit codes as a backup started by hand, without a JVM
 * start per run. The daemon's state directory holds the per-volume state files ({@code volumes/})
 * and the known-servers file.
 */
final class InProcessBackup implements VolumeBackup {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ERROR_PREFIX = "holdfast-agent: error: ";

    @Override
    public BackupOutcome backup(AgentConfig config, AgentConfig.VolumeConfig volume) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HoldfastAgent.run(arguments(config, volume), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        ExitCode exit = exitCode(code);
        if (exit != ExitCode.OK) {
            return new BackupOutcome(exit, null, null, 0, 0, errorLine(err.toString(StandardCharsets.UTF_8), code), 0);
        }
        try {
            JsonNode r = JSON.readTree(out.toString(StandardCharsets.UTF_8));
            return new BackupOutcome(exit, r.path("snapshotId").asText(null), r.path("mode").asText(null),
                    r.path("bytesRead").asLong(), r.path("sentBytes").asLong(), null, r.path("sourceBytesRead").asLong());
        } catch (IOException e) {
            return new BackupOutcome(ExitCode.INTERNAL, null, null, 0, 0, "backup printed no JSON summary: " + e.getMessage(), 0);
        }
    }

    static String[] arguments(AgentConfig config, AgentConfig.VolumeConfig volume) {
        List<String> a = new ArrayList<>(List.of("backup", "--json", "--no-daemon"));
        a.addAll(connectionArguments(config, volume));
        a.addAll(List.of("--source", volume.source().toString(),
                "--state-dir", config.stateDir().resolve("volumes").toString()));
        if (volume.blockSize() > 0) {
            a.addAll(List.of("--block-size", String.valueOf(volume.blockSize())));
        }
        if (volume.dirtyBitmap()) {
            a.add("--dirty-bitmap");
        }
        if (volume.preHook() != null) {
            // the run reaches its backup only after the pre hook succeeded
            a.addAll(List.of("--consistency", "application"));
        }
        return a.toArray(String[]::new);
    }

    /** The options that reach the server for {@code volume}: address, volume, trust, token. */
    static List<String> connectionArguments(AgentConfig config, AgentConfig.VolumeConfig volume) {
        List<String> a = new ArrayList<>(List.of(
                "--server", config.server(),
                "--volume", volume.name(),
                "--known-servers", config.stateDir().resolve("known-servers").toString()));
        AgentConfig.Trust trust = config.trust();
        if (trust.noTls()) {
            a.add("--no-tls");
        } else if (trust.fingerprint() != null) {
            a.addAll(List.of("--fingerprint", trust.fingerprint()));
        } else {
            a.addAll(List.of("--ca-cert", trust.caCert().toString()));
        }
        if (config.tokenFile() != null) {
            a.addAll(List.of("--token-file", config.tokenFile().toString()));
        }
        return a;
    }

    private static ExitCode exitCode(int code) {
        for (ExitCode e : ExitCode.values()) {
            if (e.code() == code) {
                return e;
            }
        }
        return ExitCode.INTERNAL;
    }

    /** The CLI's one-line error (what happened and what to do), or the last line it printed. */
    static String errorLine(String stderr, int code) {
        String last = null;
        for (String line : stderr.lines().toList()) {
            if (line.startsWith(ERROR_PREFIX)) {
                return line.substring(ERROR_PREFIX.length());
            }
            if (!line.isBlank()) {
                last = line;
            }
        }
        return last == null ? "exit code " + code : last;
    }
}
