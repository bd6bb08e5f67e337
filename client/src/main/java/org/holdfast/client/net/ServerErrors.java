package org.holdfast.client.net;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.common.protocol.ErrorMessage;

/**
 * Turns the server's ERROR frames into one-line failures with advice. Where the server's message
 * already says what to do (quota, storage full, damaged block), the hint adds only what it leaves
 * out, so the line says its advice once.
 */
final class ServerErrors {
    private ServerErrors() {
    }

    static AgentException rejected(ErrorMessage err) {
        String hint = switch (err.code()) {
            case UNKNOWN_VOLUME -> "check --volume; a volume exists once its first backup committed";
            case UNKNOWN_SNAPSHOT -> "list the volume's snapshots with 'holdfast-agent snapshots --volume NAME'";
            case VOLUME_BUSY -> "another backup of this volume is running; retry when it has finished";
            case BLOCK_SIZE_MISMATCH -> "the volume exists with another block size; pass that --block-size, or leave the option out"
                    + " (and move the volume's state file away) to use the volume's";
            // the server's message names the volume, its size, the quota and the PATCH that raises it
            case QUOTA_EXCEEDED -> null;
            // the server's message says why (malformed, unknown, revoked, expired, out of scope); name every place a token comes from
            case UNAUTHORIZED -> "check the token the agent used (--token-file, --token or HOLDFAST_TOKEN; the daemon's token-file):"
                    + " that it is whole, an agent token, not revoked or expired, and that its volumes include this one";
            // the server's message says how to free space; only the retry is the agent's to add
            case STORAGE_FULL -> "retry once space is free";
            case UNSUPPORTED_VERSION -> "use an agent of the server's release, or upgrade the server (docs/operations.md, \"Upgrading\": server first)";
            case FINGERPRINT_MISMATCH -> "the source changed while it was read; back up from a snapshot of it, or retry";
            // the server's message says the block is marked bad and that the next backup repairs it
            case CORRUPT_DATA -> "retry the restore after that backup";
            // the server's message names the worker; the agent daemon retries within its retry settings
            case WORKER_UNAVAILABLE -> "transient: nothing was committed; run the backup again (the agent daemon retries it)";
            case LIMIT_EXCEEDED -> "the server refused this for one of its agent-port limits (connections per address or in"
                    + " total, volume size, frame rate); the message says which; retry later or ask an operator (holdfast.ingest.*)";
            default -> "see the server log";
        };
        ExitCode exit = switch (err.code()) {
            case BAD_FRAME, BAD_STATE, UNSUPPORTED_VERSION, CORRUPT_DATA -> ExitCode.INTEGRITY;
            case INTERNAL -> ExitCode.REJECTED;
            case STORAGE_FULL -> ExitCode.STORAGE_FULL;
            case WORKER_UNAVAILABLE -> ExitCode.TRANSIENT;
            default -> ExitCode.REJECTED;
        };
        if (err.code() == org.holdfast.common.protocol.ErrorCode.UNSUPPORTED_VERSION) {
            return new VersionRefusedException(exit, "server refused: " + err.code() + ": " + err.message(), hint);
        }
        return new AgentException(exit, "server refused: " + err.code() + ": " + err.message(), hint);
    }
}
