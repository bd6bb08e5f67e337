package org.holdfast.common.protocol;

/**
 * GC_SESSION_END (0x5A), master to worker: backup session {@code sessionId} committed or was
 * abandoned; the worker's protection of its blocks is no longer tied to it (their raised expiry
 * stays). No answer.
 */
public record GcSessionEnd(long sessionId) implements Message {
    @Override
    public MessageType type() {
        return MessageType.GC_SESSION_END;
    }
}
