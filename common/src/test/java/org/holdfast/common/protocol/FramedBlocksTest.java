package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** A BLOCKS message from the builder goes out in its own buffer, byte for byte the frame the copying encoder writes. */
class FramedBlocksTest {
    private final TrackingAllocator alloc = new TrackingAllocator();

    private static Blocks.Builder sample(Blocks.Builder b) {
        byte[] payload = new byte[4096];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 7 + 3);
        }
        return b.add(9, PayloadCodec.RAW, payload, 0, 4096).add(10, PayloadCodec.ZSTD, payload, 5, 100)
                .addFrame(11, payload, 200, 300).addFrameMember(12).addFrameMember(13);
    }

    /** The frame the encoder writes by copying every field (its path for any message). */
    private static byte[] copied(Blocks b) {
        ByteBuf out = Unpooled.buffer();
        FrameEncoder.write(b, out);
        return ByteBufUtil.getBytes(out);
    }

    private static ByteBuf sent(Blocks b) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameEncoder());
        ch.writeOutbound(b);
        ByteBuf frame = ch.readOutbound();
        assertThat(ch.finish()).isFalse();
        return frame;
    }

    @Test
    void builtBlocks_goOutInTheirOwnBuffer_asTheCopiedFrame() {
        Blocks b = sample(Blocks.builder(alloc, 0)).build();
        assertThat(b.isFramed()).isTrue();
        byte[] expected = copied(b);
        ByteBuf data = b.data();
        ByteBuf frame = sent(b);
        assertThat(frame).isSameAs(data); // no copy
        assertThat(ByteBufUtil.getBytes(frame)).isEqualTo(expected);
        EmbeddedChannel dec = new EmbeddedChannel(new FrameDecoder());
        ((FrameDecoder) dec.pipeline().first()).protocolVersion(ProtocolLimits.PROTOCOL_VERSION);
        dec.writeInbound(frame);
        Blocks back = dec.readInbound();
        assertThat(back.lbns()).containsExactly(9, 10, 11, 12, 13);
        assertThat(back.lengths()).containsExactly(4096, 100, 300, 0, 0);
        back.release();
        assertThat(dec.finish()).isFalse();
        alloc.assertAllReleased();
    }

    @Test
    void givenBuffer_holdsTheFrame_andAChangedMessageIsCopiedAsChanged() {
        Blocks b = sample(Blocks.builder(Unpooled.directBuffer(64))).build(); // grows as blocks are added
        assertThat(b.isFramed()).isTrue();
        b.lbns()[1] = 77; // the buffer's header now disagrees with the message: the encoder must not trust it
        assertThat(b.isFramed()).isFalse();
        byte[] expected = copied(b);
        ByteBuf frame = sent(b);
        assertThat(ByteBufUtil.getBytes(frame)).isEqualTo(expected);
        assertThat(frame.getLong(Blocks.FRAME_PREFIX_BYTES + Blocks.BLOCK_HEADER_BYTES + 4096)).isEqualTo(77);
        frame.release();
    }

    @Test
    void blocksMadeWithoutBuilder_areNotFramed() {
        ByteBuf data = Unpooled.buffer().writeBytes(new byte[100]);
        Blocks b = new Blocks(1, new long[] {5}, new byte[] {PayloadCodec.RAW}, new int[] {0}, new int[] {100}, data);
        assertThat(b.isFramed()).isFalse();
        assertThat(ByteBufUtil.getBytes(sent(b))).isEqualTo(copied(new Blocks(1, new long[] {5}, new byte[] {PayloadCodec.RAW},
                new int[] {0}, new int[] {100}, Unpooled.buffer().writeBytes(new byte[100]))));
    }

    @Test
    void builderPayloadBytes_countsPayloadsNotHeaders() {
        Blocks.Builder b = sample(Blocks.builder(alloc, 0));
        assertThat(b.payloadBytes()).isEqualTo(4096 + 100 + 300);
        b.close();
        alloc.assertAllReleased();
    }
}
