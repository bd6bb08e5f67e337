package org.holdfast.client.daemon;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The daemon's configuration file, validated ({@link ConfigReader} reads it; docs/agent.md,
 * "Configuration reference" lists every field).
 *
 * @param server    the server's ingest address, {@code HOST:PORT}
 * @param trust     how the server is verified
 * @param tokenFile the file whose first line is the agent token, or null if the server needs none
 * @param stateDir  where the daemon keeps its socket, run log and the per-volume state files
 * @param retry     how network failures (and workers the server lost) are retried
 * @param volumes   the volumes to back up, names unique
 */
public record AgentConfig(String server, Trust trust, Path tokenFile, Path stateDir, Retry retry, List<VolumeConfig> volumes) {

    /** Exactly one of: a pinned certificate fingerprint, a CA certificate file, or no TLS at all. */
    public record Trust(String fingerprint, Path caCert, boolean noTls) {
    }

    /**
     * Retries of a backup that failed on the network (server unreachable, connection lost) or on a worker
     * the server lost (exit 8, transient): at most
     * {@code attempts} tries in all, waiting {@code initialBackoff}, then twice as long each time, never
     * longer than {@code maxBackoff}.
     */
    public record Retry(int attempts, Duration initialBackoff, Duration maxBackoff) {
        /** The wait before try number {@code attempt + 1}, after {@code attempt} failed tries (1-based). */
        public Duration backoff(int attempt) {
            long ms = initialBackoff.toMillis();
            for (int i = 1; i < attempt && ms < maxBackoff.toMillis(); i++) {
                ms *= 2;
            }
            return Duration.ofMillis(Math.min(ms, maxBackoff.toMillis()));
        }
    }

    /** A command run through {@code /bin/sh -c}, killed (with its children) after {@code timeout}. */
    public record Hook(String command, Duration timeout) {
    }

    /**
     * One protected volume.
     *
     * @param name      the volume's name on the server
     * @param source    the image file or block device to read
     * @param blockSize the block size for a new volume, or 0 for the agent's default
     * @param schedule  when backups are due
     * @param preHook   run before the backup, or null; a failure skips the backup
     * @param postHook  run after every run that began, or null, whatever the outcome
     * @param dirtyBitmap a qcow2 source tracks its changes with a persistent dirty bitmap ({@code backup --dirty-bitmap})
     */
    public record VolumeConfig(String name, Path source, int blockSize, CronSchedule schedule, Hook preHook, Hook postHook,
                               boolean dirtyBitmap) {
    }

    /** The socket {@code run-now} and {@code status} talk to. */
    public Path socket() {
        return socketIn(stateDir);
    }

    /** The control socket's place in a state directory. */
    public static Path socketIn(Path stateDir) {
        return stateDir.resolve("agent.sock");
    }

    /** The volume with this name, or null. */
    public VolumeConfig volume(String name) {
        return volumes.stream().filter(v -> v.name().equals(name)).findFirst().orElse(null);
    }
}
