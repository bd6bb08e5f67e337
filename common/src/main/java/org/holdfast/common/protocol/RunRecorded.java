package org.holdfast.common.protocol;

/** RUN_RECORDED (0x31, protocol version 3), server to agent: the RUN_REPORT is stored. Empty body. */
public record RunRecorded() implements Message {
    /** The one instance anyone needs. */
    public static final RunRecorded INSTANCE = new RunRecorded();

    @Override
    public MessageType type() {
        return MessageType.RUN_RECORDED;
    }
}
