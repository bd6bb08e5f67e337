package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SEALED_LOGS and SEALED_LOGS_RECORDED (0x66/0x67, cluster version 8) byte for byte: the fixture body
 * of a full report of one log (the report bytes are DATA_SYNCED's), the acknowledgement, and each bad
 * report refused with its code, naming the frame.
 */
class SealedLogsFramesWireTest {
    /** requestId 9, full, unhashed 0, one log (id 2, epoch 1, log epoch 0x10, 4096 bytes, SHA-256 of ff), none dropped. */
    private static final String FULL_ONE = "0000000000000009" + "01" + "00000000" + "00000001"
            + "00000002" + "0000000000000001" + "0000000000000010" + "0000000000001000" + "ff".repeat(32) + "00000000";

    private static byte[] body(Message m) {
        ByteBuf b = Unpooled.buffer();
        SealedLogsFrames.writeBody(m, b);
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    private static Message parse(MessageType type, String hex) {
        return SealedLogsFrames.parseBody(type, Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex)));
    }

    @Test
    void fullReportAndItsAcknowledgement_fixtureBytes_bothWays() {
        byte[] sha = new byte[32];
        Arrays.fill(sha, (byte) 0xff);
        SealedLogsPush m = new SealedLogsPush(9, new SealedLogReport(true, List.of(new SealedLogReport.Sealed(2, 1, 0x10, 4096, sha)),
                List.of(), 0));
        assertThat(HexFormat.of().formatHex(body(m))).isEqualTo(FULL_ONE);
        assertThat(SealedLogsFrames.bodyBytes(m)).isEqualTo(FULL_ONE.length() / 2);
        assertThat(parse(MessageType.SEALED_LOGS, FULL_ONE)).isEqualTo(m);
        assertThat(HexFormat.of().formatHex(body(new SealedLogsRecorded(9)))).isEqualTo("0000000000000009");
        assertThat(parse(MessageType.SEALED_LOGS_RECORDED, "0000000000000009")).isEqualTo(new SealedLogsRecorded(9));
    }

    @Test
    void badReports_refusedWithTheirCode() {
        String head = "0000000000000009";
        assertCode(head + "00" + "00000000" + "00010001", ErrorCode.LIMIT_EXCEEDED, "SEALED_LOGS sealed-log count 65537");
        assertCode(head + "00" + "00000000" + "00000000" + "00010001", ErrorCode.LIMIT_EXCEEDED, "SEALED_LOGS dropped count");
        assertCode(head + "01" + "00000000" + "00000000" + "00000001" + "00000003", ErrorCode.BAD_FRAME, "drops");
        assertCode(head + "00" + "00000000" + "00000001" + "00000000" + "0000000000000001" + "0000000000000010"
                + "0000000000001000" + "ff".repeat(32) + "00000000", ErrorCode.BAD_FRAME, "SEALED_LOGS sealed log 0");
        assertCode(head + "00", ErrorCode.BAD_FRAME, "unhashed");
    }

    private static void assertCode(String hex, ErrorCode code, String words) {
        assertThatThrownBy(() -> parse(MessageType.SEALED_LOGS, hex))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(code)).hasMessageContaining(words);
    }
}
