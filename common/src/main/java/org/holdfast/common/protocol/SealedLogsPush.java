package org.holdfast.common.protocol;

/**
 * SEALED_LOGS (0x66), worker to master (cluster version 8, {@link Register#SYNC_REPORT_VERSION}): an
 * archiving worker's {@link SealedLogReport} sent between syncs, soon after uploads were confirmed, so
 * a log uploaded after the worker's last DATA_SYNCED is recorded too. It continues the link's reports
 * (the first on a link is full, whichever frame carries it); the master records it as it records
 * DATA_SYNCED's, in arrival order, and answers {@link SealedLogsRecorded} with the same id.
 */
public record SealedLogsPush(long requestId, SealedLogReport report) implements Message {
    public SealedLogsPush {
        java.util.Objects.requireNonNull(report, "report");
    }

    @Override
    public MessageType type() {
        return MessageType.SEALED_LOGS;
    }
}
