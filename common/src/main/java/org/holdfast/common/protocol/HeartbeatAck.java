package org.holdfast.common.protocol;

/** HEARTBEAT_ACK (0x43), master to worker: the heartbeat {@code sequence} arrived; a worker that hears none for a while reconnects. */
public record HeartbeatAck(long sequence) implements Message {
    public HeartbeatAck {
        Heartbeat.checkNotNegative("sequence", sequence);
    }

    @Override
    public MessageType type() {
        return MessageType.HEARTBEAT_ACK;
    }
}
