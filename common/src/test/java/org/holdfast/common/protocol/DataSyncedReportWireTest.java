package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * DATA_SYNCED's sealed-log report (cluster version 7) byte for byte: the fixture body of a full report
 * of one log, a version 6 body without a report, and each bad input refused with its code.
 */
class DataSyncedReportWireTest {
    /** requestId 9, durableBelow 5, full, unhashed 0, one log (id 2, epoch 1, log epoch 0x10, 4096 bytes, SHA-256 of ff), none dropped. */
    private static final String FULL_ONE = "0000000000000009" + "0000000000000005" + "01" + "00000000" + "00000001"
            + "00000002" + "0000000000000001" + "0000000000000010" + "0000000000001000" + "ff".repeat(32) + "00000000";

    private static final SealedLogReport.Sealed LOG_2 = new SealedLogReport.Sealed(2, 1, 0x10, 4096, sha());

    private static byte[] sha() {
        byte[] s = new byte[32];
        java.util.Arrays.fill(s, (byte) 0xff);
        return s;
    }

    private static byte[] body(Message m) {
        ByteBuf b = Unpooled.buffer();
        DataFrames.writeBody(m, b);
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    private static Message parse(String hex) {
        return DataFrames.parseBody(MessageType.DATA_SYNCED, Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex)));
    }

    @Test
    void fullReport_fixtureBytes_bothWays() {
        DataSynced m = new DataSynced(9, 5, new SealedLogReport(true, List.of(LOG_2), List.of(), 0));
        assertThat(HexFormat.of().formatHex(body(m))).isEqualTo(FULL_ONE);
        assertThat(DataFrames.bodyBytes(m)).isEqualTo(FULL_ONE.length() / 2);
        assertThat(parse(FULL_ONE)).isEqualTo(m);
    }

    @Test
    void versionSixBody_noReport() {
        assertThat(((DataSynced) parse(FULL_ONE.substring(0, 32))).sealed()).isNull();
        assertThat(body(new DataSynced(9, 5))).hasSize(16);
    }

    @Test
    void badReports_refusedWithTheirCode() {
        String head = "0000000000000009" + "0000000000000005";
        // full, one dropped id
        assertCode(head + "01" + "00000000" + "00000000" + "00000001" + "00000003", ErrorCode.BAD_FRAME, "drops");
        assertCode(head + "02" + "00000000" + "00000000" + "00000000", ErrorCode.BAD_FRAME, "full 2");
        assertCode(head + "00" + "00000000" + "00010001", ErrorCode.LIMIT_EXCEEDED, "count");
        assertCode(head + "00" + "00000000" + "00000001" + "00000000" + "0000000000000001" + "0000000000000010"
                + "0000000000001000" + "ff".repeat(32) + "00000000", ErrorCode.BAD_FRAME, "out of range");
        assertCode(head + "00" + "00000000" + "00000001" + "00000002", ErrorCode.BAD_FRAME, "truncated");
        assertCode(head + "00" + "00000000" + "00000000" + "00000001" + "00000000", ErrorCode.BAD_FRAME, "dropped log id 0");
    }

    private static void assertCode(String hex, ErrorCode code, String words) {
        assertThatThrownBy(() -> parse(hex)).isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(code))
                .hasMessageContaining(words);
    }
}
