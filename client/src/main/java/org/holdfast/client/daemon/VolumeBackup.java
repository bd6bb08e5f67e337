package org.holdfast.client.daemon;

/**
 * The one thing the daemon needs from the rest of the agent: one try at backing up a volume, the
 * way {@code holdfast-agent backup} does it (the CLI implements it; retries are the daemon's).
 */
public interface VolumeBackup {
    /** Backs up {@code volume} once; never throws for an ordinary failure, reports it in the outcome. */
    BackupOutcome backup(AgentConfig config, AgentConfig.VolumeConfig volume);
}
