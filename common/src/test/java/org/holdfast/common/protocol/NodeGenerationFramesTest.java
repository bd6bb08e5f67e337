package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The node generation (cluster version 7): REGISTER ends with it from version 7, REGISTERED on such a link; fixture bytes, bad input. */
class NodeGenerationFramesTest {
    private static final Register.Counts COUNTS = new Register.Counts(1, 2, 3);

    private static ByteBuf frame(Message m) {
        return RegisterCountsMarkTest.frame(m);
    }

    private static Message decode(ByteBuf frame) {
        return RegisterCountsMarkTest.decode(frame);
    }

    private static Registered registered(long generation) {
        return new Registered(3, 4, 1L << 48, (1L << 48) + 10, 500, "v", (1L << 48) + 2, 15_000, generation);
    }

    @Test
    void register_version7_endsWithTheGeneration_fixtureBytes_andRoundTrips() {
        Register r = new Register(Register.NODE_GENERATION_VERSION, "w", "t", "v", 2, 0, 0, 0, COUNTS, 9);
        ByteBuf f = frame(r);
        String hex = HexFormat.of().formatHex(ByteBufUtilBytes.of(f));
        assertThat(hex).as("the counts mark, then u64 generation 9, last").endsWith("0000000000000001" + "0000000000000002"
                + "0000000000000003" + "0000000000000009");
        assertThat(decode(frame(r))).isEqualTo(r);
        assertThat(FrameEncoder.frameBytes(r)).isEqualTo(f.readableBytes());
        assertThat(new Register(Register.NODE_GENERATION_VERSION, "w", "t", "v", 2, 0, 0, 0, COUNTS).generation())
                .as("none held: 0").isZero();
        assertThat(new Register(Register.REPAIR_VERSION, "w", "t", "v", 2, 0, 0, 0).generation()).isEqualTo(Register.NO_GENERATION);
    }

    @Test
    void register_generationOnTheWrongVersion_orNegative_refused_andAbove2To63OnTheWire_badFrame() {
        assertThatThrownBy(() -> new Register(Register.REPAIR_VERSION, "w", "t", "v", 2, 0, 0, 0, null, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("versions from 7 carry one");
        assertThatThrownBy(() -> new Register(7, "w", "t", "v", 2, 0, 0, 0, COUNTS, -1)).isInstanceOf(IllegalArgumentException.class);
        ByteBuf f = frame(new Register(7, "w", "t", "v", 2, 0, 0, 0, COUNTS, 1));
        f.setLong(f.writerIndex() - 8, -1L);
        assertThatThrownBy(() -> decode(f)).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME)).hasMessageContaining("generation");
        ByteBuf cut = frame(new Register(7, "w", "t", "v", 2, 0, 0, 0, COUNTS, 1));
        cut.setInt(0, cut.getInt(0) - 8);
        cut.writerIndex(cut.writerIndex() - 8);
        assertThatThrownBy(() -> decode(cut)).as("a version 7 REGISTER without it is short").isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME));
    }

    @Test
    void registered_generationAfterTheFloorPair_fixtureBytes_roundTrips_andZeroIsBadFrame() {
        Registered r = registered(7);
        ByteBuf f = frame(r);
        assertThat(HexFormat.of().formatHex(ByteBufUtilBytes.of(f))).as("floor, lost-after, then the generation")
                .endsWith("0001000000000002" + "00003a98" + "0000000000000007");
        assertThat(decode(frame(r))).isEqualTo(r);
        assertThat(FrameEncoder.frameBytes(r)).isEqualTo(f.readableBytes());
        assertThat(f.readableBytes() - frame(registered(Register.NO_GENERATION)).readableBytes()).isEqualTo(8);
        assertThat(decode(frame(registered(Register.NO_GENERATION)))).as("version 5 and 6 links: none").isEqualTo(registered(-1));
        ByteBuf zero = frame(r);
        zero.setLong(zero.writerIndex() - 8, 0);
        assertThatThrownBy(() -> decode(zero)).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME)).hasMessageContaining("generation");
        assertThatThrownBy(() -> new Registered(3, 4, 1, 10, 500, "v", Registered.NO_PBN_FLOOR, Registered.NO_LOST_AFTER, 5))
                .as("never without the floor pair").isInstanceOf(IllegalArgumentException.class);
    }

    /** The readable bytes of a buffer, without consuming them. */
    private static final class ByteBufUtilBytes {
        static byte[] of(ByteBuf b) {
            return io.netty.buffer.ByteBufUtil.getBytes(b);
        }
    }
}
