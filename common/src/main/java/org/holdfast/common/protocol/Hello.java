package org.holdfast.common.protocol;

/** HELLO (0x01), agent to server: opens a connection. The magic is implicit (checked by the decoder). */
public record Hello(int protocolVersion, String agentName, String token) implements Message {
    public Hello {
        checkU16("protocolVersion", protocolVersion);
        WireStrings.check("agentName", agentName, ProtocolLimits.MAX_AGENT_NAME);
        WireStrings.check("token", token, ProtocolLimits.MAX_TOKEN);
    }

    /** A HELLO offering this agent's newest protocol version. */
    public static Hello of(String agentName, String token) {
        return new Hello(ProtocolLimits.PROTOCOL_VERSION, agentName, token == null ? "" : token);
    }

    static void checkU16(String field, int v) {
        if (v < 0 || v > 0xffff) {
            throw new IllegalArgumentException(field + " out of u16 range: " + v);
        }
    }

    @Override
    public MessageType type() {
        return MessageType.HELLO;
    }

    @Override
    public String toString() {
        return "Hello[protocolVersion=" + protocolVersion + ", agentName=" + agentName + ", token="
                + (token.isEmpty() ? "none" : "***") + "]";
    }
}
