package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** STALE_MARKS and STALE_MARKS_TAKEN (cluster version 8): fixture bytes, round trips, bad input. */
class StaleMarksFramesTest {
    private static byte[] fp(int v) {
        byte[] b = new byte[32];
        java.util.Arrays.fill(b, (byte) v);
        return b;
    }

    @Test
    void staleMarks_fixtureBytes_roundTrip() {
        StaleMarks m = new StaleMarks(7, 1, new long[] {(1L << 48) + 3}, fp(0xAB));
        ByteBuf f = RegisterCountsMarkTest.frame(m);
        String hex = HexFormat.of().formatHex(io.netty.buffer.ByteBufUtil.getBytes(f));
        assertThat(hex).as("partId, count, then PBN and fingerprint").endsWith("0000000000000007" + "00000001" + "0001000000000003"
                + "ab".repeat(32));
        assertThat(FrameEncoder.frameBytes(m)).isEqualTo(f.readableBytes());
        assertThat(RegisterCountsMarkTest.decode(RegisterCountsMarkTest.frame(m))).isEqualTo(m);
        assertThat(MessageType.STALE_MARKS.code()).isEqualTo(0x64);
        assertThat(MessageType.STALE_MARKS_TAKEN.code()).isEqualTo(0x65);
    }

    @Test
    void staleMarksTaken_fixtureBytes_roundTrip() {
        StaleMarksTaken t = StaleMarksTaken.of(9, StaleMarksTaken.REFUSED, "no");
        ByteBuf f = RegisterCountsMarkTest.frame(t);
        assertThat(HexFormat.of().formatHex(io.netty.buffer.ByteBufUtil.getBytes(f))).endsWith("0000000000000009" + "02" + "0002" + "6e6f");
        assertThat(RegisterCountsMarkTest.decode(RegisterCountsMarkTest.frame(t))).isEqualTo(t);
    }

    @Test
    void badInput_zeroCount_pbnZero_unknownStatus_areBadFrame() {
        assertThatThrownBy(() -> new StaleMarks(1, 0, new long[0], new byte[0])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not within 1..");
        ByteBuf zero = RegisterCountsMarkTest.frame(new StaleMarks(1, 1, new long[] {5}, fp(1)));
        zero.setLong(zero.writerIndex() - 40, 0);
        assertThatThrownBy(() -> RegisterCountsMarkTest.decode(zero)).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME)).hasMessageContaining("PBN 0");
        ByteBuf none = RegisterCountsMarkTest.frame(new StaleMarks(1, 1, new long[] {5}, fp(1)));
        none.setInt(none.writerIndex() - 44, 0);
        assertThatThrownBy(() -> RegisterCountsMarkTest.decode(none)).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME));
        ByteBuf status = RegisterCountsMarkTest.frame(StaleMarksTaken.of(1, StaleMarksTaken.TAKEN, ""));
        status.setByte(status.writerIndex() - 3, 3);
        assertThatThrownBy(() -> RegisterCountsMarkTest.decode(status)).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME)).hasMessageContaining("status 3");
    }
}
