package org.holdfast.client.cli;

import java.util.Set;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * Names the command that failed in the hint of a transient failure (exit 8): the server's refusal is
 * turned into a failure below the CLI, which words it for a backup, the common case.
 */
final class TransientHint {
    /** Commands whose failure is a backup's, whose hint already says what to do. */
    private static final Set<String> BACKUPS = Set.of("backup", "run-now");
    /** Commands that read a snapshot's blocks, which the master reads from the bucket once a data worker is lost. */
    private static final Set<String> RESTORES = Set.of("restore");

    private TransientHint() {
    }

    /** {@code e}, or for a transient failure of a command other than a backup the same failure with its hint naming {@code command}. */
    static Exception named(Exception e, String command) {
        if (!(e instanceof AgentException a) || a.exitCode() != ExitCode.TRANSIENT || command == null || BACKUPS.contains(command)) {
            return e;
        }
        return new AgentException(ExitCode.TRANSIENT, a.getMessage(), "transient: the server lost a worker this " + command
                + " needed; run 'holdfast-agent " + command + "' again once its workers are up (GET /api/v1/cluster)"
                + (RESTORES.contains(command) ? ", or, if it stays down, after holdfast.cluster.lost-after, when the master"
                + " reads its blocks from the bucket (data on workers with a bucket)" : ""), a);
    }
}
