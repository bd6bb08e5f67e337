package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** REGISTER's counts mark (cluster version 7): on the wire exactly from version 7, and refused as an older master refuses it. */
class RegisterCountsMarkTest {
    private static final Register.Counts COUNTS = new Register.Counts(5L << 20, 1L << 48, (9L << 20) + 3);

    private static Register register(int version, Register.Counts counts) {
        return new Register(version, "w1", "hft_x", "v", 2, 1L << 30, 1L << 40, 4, counts);
    }

    static ByteBuf frame(Message m) {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.write(m, b);
        return b;
    }

    static Message decode(ByteBuf frame) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        try {
            ch.writeInbound(frame);
            return ch.readInbound();
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** The frame of {@code m} with its body cut or grown by {@code delta} bytes (zeros), the frame length fixed. */
    private static ByteBuf resized(Message m, int delta) {
        ByteBuf f = frame(m);
        ByteBuf out = Unpooled.buffer();
        int length = f.getInt(0) + delta;
        out.writeInt(length).writeBytes(f, 4, Math.min(length, f.readableBytes() - 4));
        out.writeZero(Math.max(0, delta));
        return out;
    }

    @Test
    void register_version7_endsWithTheCountsAndRoundTrips_version6HasNone() {
        Register v7 = register(Register.COUNTS_MARK_VERSION, COUNTS);
        Register v6 = new Register(Register.REPAIR_VERSION, "w1", "hft_x", "v", 2, 1L << 30, 1L << 40, 4);

        assertThat(decode(frame(v7))).isEqualTo(v7);
        assertThat(decode(frame(v6))).isEqualTo(v6);
        assertThat(v6.counts()).isNull();
        assertThat(frame(v7).readableBytes() - frame(v6).readableBytes()).as("three u64 and the generation at the end").isEqualTo(32);
        assertThat(FrameEncoder.frameBytes(v7)).isEqualTo(frame(v7).readableBytes());
        assertThat(new Register(Register.COUNTS_MARK_VERSION, "w1", "t", "v", 1, 1, 1, 0).counts())
                .as("a version 7 REGISTER without a GC'd range says so").isEqualTo(Register.Counts.NONE);
        assertThat(Register.Counts.NONE.any()).isFalse();
        assertThat(new Register.Counts(0, 0, 1).any()).as("acknowledged a delta: it holds counts").isTrue();
    }

    @Test
    void register_countsOnTheWrongVersion_refused() {
        assertThatThrownBy(() -> register(Register.REPAIR_VERSION, COUNTS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("versions from 7 carry them");
        assertThatThrownBy(() -> register(Register.COUNTS_MARK_VERSION, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Register.Counts(-1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void decode_version7WithoutCounts_badFrame_version6WithThem_trailingBytesAsAVersion6MasterSaysIt() {
        Register v7 = register(Register.COUNTS_MARK_VERSION, COUNTS);
        assertThatThrownBy(() -> decode(resized(v7, -8))).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME));
        // a version 6 master reads the archive epoch and stops: what the worker's fallback recognises
        Register v6 = new Register(Register.REPAIR_VERSION, "w1", "hft_x", "v", 2, 1L << 30, 1L << 40, 4);
        assertThatThrownBy(() -> decode(resized(v6, 32))).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME)).hasMessageContaining("REGISTER has 32 trailing bytes");
    }

    @Test
    void decode_countsAbove2To63_badFrame() {
        ByteBuf f = frame(register(Register.COUNTS_MARK_VERSION, COUNTS));
        f.setLong(f.writerIndex() - 16, -1L); // acknowledged (before the generation): u64 max
        assertThatThrownBy(() -> decode(f)).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME)).hasMessageContaining("acknowledged");
    }
}
