package org.holdfast.common.protocol;

/** HELLO_OK (0x02), server to agent: the server accepts the connection and says its frame limit. */
public record HelloOk(int protocolVersion, String serverVersion, int maxFrame) implements Message {
    public HelloOk {
        Hello.checkU16("protocolVersion", protocolVersion);
        WireStrings.check("serverVersion", serverVersion, ProtocolLimits.MAX_SERVER_VERSION);
    }

    @Override
    public MessageType type() {
        return MessageType.HELLO_OK;
    }
}
