package org.holdfast.common.protocol;

/**
 * SEALED_LOGS_RECORDED (0x67), master to worker (cluster version 8): the report of SEALED_LOGS
 * {@code requestId} is in the master's catalog (synced); the worker sends its next one only after it.
 */
public record SealedLogsRecorded(long requestId) implements Message {
    @Override
    public MessageType type() {
        return MessageType.SEALED_LOGS_RECORDED;
    }
}
