package org.holdfast.client.net;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.common.protocol.ErrorMessage;

/** Turns the server's ERROR frames into one-line failures with advice. */
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
            case QUOTA_EXCEEDED -> "the volume is larger than the quota an operator set on it; ask an operator to raise the quota"
                    + " (PATCH /api/v1/volumes/NAME {\"quotaBytes\": ...}) or back up a smaller volume";
            case UNAUTHORIZED -> "check --token (or HOLDFAST_TOKEN) and the token's volumes";
            case STORAGE_FULL -> "free space on the server: delete snapshots or volumes, then run reclaim-now"
                    + " (POST /api/v1/gc/reclaim), or grow its disk; then retry";
            case UNSUPPORTED_VERSION -> "use an agent that matches the server's version";
            case FINGERPRINT_MISMATCH -> "the source changed while it was read; back up from a snapshot of it, or retry";
            case CORRUPT_DATA -> "the server's copy of this block is damaged and marked bad; a new backup of a healthy source"
                    + " repairs it, then retry the restore (an operator can run a verify job: POST /api/v1/verify)";
            case LIMIT_EXCEEDED -> "the server refused this for one of its agent-port limits (connections per address or in"
                    + " total, volume size, frame rate); the message says which; retry later or ask an operator (holdfast.ingest.*)";
            default -> "see the server log";
        };
        ExitCode exit = switch (err.code()) {
            case BAD_FRAME, BAD_STATE, UNSUPPORTED_VERSION, CORRUPT_DATA -> ExitCode.INTEGRITY;
            case INTERNAL -> ExitCode.REJECTED;
            case STORAGE_FULL -> ExitCode.STORAGE_FULL;
            default -> ExitCode.REJECTED;
        };
        return new AgentException(exit, "server refused: " + err.code() + ": " + err.message(), hint);
    }
}
