package org.holdfast.client.daemon;

import org.holdfast.client.ExitCode;

/**
 * What one try of a backup came to.
 *
 * @param exit      the agent's exit code for it ({@link ExitCode#OK} when committed)
 * @param snapshot  the committed snapshot's id ({@code volume@sequence}), or null
 * @param mode      {@code full} or {@code incremental}, or null
 * @param bytesRead bytes scanned (holes included)
 * @param bytesSent payload bytes sent to the server
 * @param error     the agent's error message, or null
 * @param sourceBytesRead bytes actually read from the source
 */
public record BackupOutcome(ExitCode exit, String snapshot, String mode, long bytesRead, long bytesSent, String error,
                            long sourceBytesRead) {
    /** True when the snapshot committed. */
    public boolean ok() {
        return exit == ExitCode.OK;
    }

    /** True for the failures worth retrying: the server was unreachable, the connection broke, or the server lost a worker. */
    public boolean retryable() {
        return exit == ExitCode.NETWORK || exit == ExitCode.TRANSIENT;
    }
}
