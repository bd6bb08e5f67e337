package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** Message bodies parsed directly, without framing: a malformed field is refused with its code and a text that names it. */
class MessageParserTest {
    private final MessageParser parser = new MessageParser();

    @Test
    void parse_commitWithUnknownConsistency_refusedSayingWhatToSend() {
        ByteBuf b = Unpooled.buffer().writeLong(1L << 20).writeByte(0);
        assertThatThrownBy(() -> parser.parse(MessageType.COMMIT, b)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("COMMIT consistency 0 is not 1 (crash) or 2 (application); leave the byte out");
        });
    }

    @Test
    void parse_committedSnapshotIdBeforeProtocol5_refused_andAcceptedFrom5() {
        ByteBuf b = Unpooled.buffer();
        for (int i = 0; i < 8; i++) {
            b.writeLong(i + 1);
        }
        parser.protocolVersion(4);
        assertThatThrownBy(() -> parser.parse(MessageType.COMMITTED, b.duplicate())).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.getMessage()).contains("COMMITTED snapshotId needs protocol version 5; this connection agreed on version 4"));
        parser.protocolVersion(5);
        Committed c = (Committed) parser.parse(MessageType.COMMITTED, b);
        assertThat(c.snapshotId()).isEqualTo(8);
        assertThat(b.isReadable()).isFalse();
    }

    @Test
    void parse_truncatedHello_refusedNamingTheField() {
        ByteBuf b = Unpooled.buffer().writeInt(ProtocolLimits.MAGIC).writeShort(5).writeShort(10).writeByte('a');
        assertThatThrownBy(() -> parser.parse(MessageType.HELLO, b)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("truncated body: agentName needs 10 bytes, 1 left");
        });
    }
}
