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

    private static void feed(TrackingAllocator alloc, byte[] input, Random r) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ch.config().setAllocator(alloc);
        try {
            int pos = 0;
            while (pos < input.length) {
                int n = 1 + r.nextInt(input.length - pos);
                ByteBuf piece = alloc.buffer(n).writeBytes(input, pos, n);
                pos += n;
                ch.writeInbound(piece);
                for (Object o; (o = ch.readInbound()) != null; ) {
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
    }
}
