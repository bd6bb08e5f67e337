package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Seeded random inputs: pure garbage, and valid frames with bytes flipped or cut. */
class FrameDecoderFuzzTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4})
    void decode_randomGarbage_onlyProtocolExceptionAndNoLeak(long seed) {
        Random r = new Random(seed);
        TrackingAllocator alloc = new TrackingAllocator();
        for (int iter = 0; iter < 1500; iter++) {
            byte[] junk = new byte[r.nextInt(600)];
            r.nextBytes(junk);
            if (junk.length >= 6 && r.nextBoolean()) {
                // Make most frames pass the header checks so the body parsers see the garbage.
                int len = r.nextInt(junk.length - 3) + 2;
                junk[0] = 0;
                junk[1] = 0;
                junk[2] = (byte) (len >>> 8);
                junk[3] = (byte) len;
                junk[4] = 1;
                MessageType[] types = MessageType.values();
                junk[5] = (byte) types[r.nextInt(types.length)].code();
            }
            feed(alloc, junk, r);
        }
        alloc.assertAllReleased();
        assertThat(alloc.largest()).as("no allocation beyond what was received").isLessThanOrEqualTo(2048);
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13})
    void decode_mutatedValidFrames_onlyProtocolExceptionAndNoLeak(long seed) {
        Random r = new Random(seed);
        TrackingAllocator alloc = new TrackingAllocator();
        List<Message> samples = Samples.all(alloc);
        byte[][] frames = new byte[samples.size()][];
        for (int i = 0; i < frames.length; i++) {
            ByteBuf b = Unpooled.buffer();
            FrameEncoder.write(samples.get(i), b);
            frames[i] = new byte[b.readableBytes()];
            b.readBytes(frames[i]);
            ReferenceCountUtil.release(samples.get(i));
        }
        for (int iter = 0; iter < 3000; iter++) {
            byte[] f = frames[r.nextInt(frames.length)].clone();
            int flips = 1 + r.nextInt(4);
            for (int k = 0; k < flips; k++) {
                // Favour the header and the first fields, where lengths and counts live.
                int at = r.nextBoolean() ? r.nextInt(Math.min(f.length, 24)) : r.nextInt(f.length);
                f[at] = (byte) r.nextInt(256);
            }
            if (r.nextInt(4) == 0) {
                f = java.util.Arrays.copyOf(f, r.nextInt(f.length + 1));
            }
            feed(alloc, f, r);
        }
        alloc.assertAllReleased();
    }

    /**
     * The frame codecs (3, 4) and the block-size checks only run on a connection that agreed on
     * protocol 4+ and was told its block size: framed BLOCKS and RESTORE_DATA, mutated, on such a decoder.
     */
    @ParameterizedTest
    @ValueSource(longs = {21, 22})
    void decode_mutatedFramedPayloads_protocol5_onlyProtocolExceptionAndNoLeak(long seed) {
        Random r = new Random(seed);
        TrackingAllocator alloc = new TrackingAllocator();
        byte[] src = new byte[8192];
        r.nextBytes(src);
        byte[] fp = new byte[32];
        Blocks blocks = Blocks.builder(alloc, 16384).add(1, PayloadCodec.RAW, src, 0, 4096).addFrame(2, src, 7, 300)
                .addFrameMember(3).addFrameMember(4).add(5, PayloadCodec.ZSTD, src, 9, 40).addFrame(6, src, 1, 20).addFrameMember(7)
                .build();
        RestoreData.Builder rb = RestoreData.builder(alloc, 100, 16384).addZero();
        int ordinal = rb.addFrame(fp, 0, 1, 3, src, 5, 200);
        rb.addFrameMember(fp, 0, 0, ordinal).add(PayloadCodec.RAW, fp, 0, src, 0, 4096).addFrameMember(fp, 0, 2, ordinal);
        byte[][] frames = {encode(blocks), encode(rb.build())};
        int decoded = 0;
        for (int iter = 0; iter < 2000; iter++) {
            byte[] f = frames[r.nextInt(frames.length)].clone();
            int flips = r.nextInt(4); // 0: the frame as sent, which must decode
            for (int k = 0; k < flips; k++) {
                int at = r.nextBoolean() ? r.nextInt(Math.min(f.length, 80)) : r.nextInt(f.length);
                f[at] = (byte) r.nextInt(256);
            }
            FrameDecoder decoder = new FrameDecoder();
            decoder.protocolVersion(ProtocolLimits.PROTOCOL_VERSION);
            decoder.blockSize(r.nextBoolean() ? 4096 : 0);
            decoded += feed(alloc, f, r, decoder);
        }
        alloc.assertAllReleased();
        assertThat(decoded).as("framed messages that decoded").isGreaterThan(400);
    }

    private static byte[] encode(Message m) {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.write(m, b);
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        ReferenceCountUtil.release(m);
        return a;
    }

    private static void feed(TrackingAllocator alloc, byte[] input, Random r) {
        feed(alloc, input, r, new FrameDecoder());
    }

    /** Feeds {@code input} in random pieces; returns the BLOCKS and RESTORE_DATA messages decoded. */
    private static int feed(TrackingAllocator alloc, byte[] input, Random r, FrameDecoder decoder) {
        int payloadMessages = 0;
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        ch.config().setAllocator(alloc);
        try {
            int pos = 0;
            while (pos < input.length) {
                int n = 1 + r.nextInt(input.length - pos);
                ByteBuf piece = alloc.buffer(n).writeBytes(input, pos, n);
                pos += n;
                ch.writeInbound(piece);
                for (Object o; (o = ch.readInbound()) != null; ) {
                    payloadMessages += o instanceof Blocks || o instanceof RestoreData ? 1 : 0;
                    ReferenceCountUtil.release(o);
                }
            }
        } catch (ProtocolException expected) {
            assertThat(expected.code()).isNotNull();
        } catch (Throwable t) {
            fail("decoder threw " + t + " for input of " + input.length + " bytes", t);
        } finally {
            ch.finishAndReleaseAll();
        }
        return payloadMessages;
    }
}
