package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.RestoreData;
import org.holdfast.common.protocol.RestoreEnd;
import org.junit.jupiter.api.Test;

class FrameCumulatorTest {
    private static final int BS = 4096;

    /** RESTORE_DATA frames of about 1 MiB, then RESTORE_END, as the server sends them. */
    private static List<Message> frames(Random rnd) {
        List<Message> out = new ArrayList<>();
        long lbn = 0;
        for (int f = 0; f < 5; f++) {
            RestoreData.Builder b = RestoreData.builder(PooledByteBufAllocator.DEFAULT, lbn, 1 << 20);
            int blocks = 200 + rnd.nextInt(56);
            for (int i = 0; i < blocks; i++) {
                if (i % 7 == 3) {
                    b.addZero();
                } else {
                    byte[] fp = new byte[32];
                    rnd.nextBytes(fp);
                    byte[] payload = new byte[BS];
                    rnd.nextBytes(payload);
                    b.add(PayloadCodec.RAW, fp, 0, payload, 0, BS);
                }
            }
            lbn += blocks;
            out.add(b.build());
        }
        out.add(new RestoreEnd(lbn));
        return out;
    }

    private static ByteBuf wire(List<Message> messages) {
        EmbeddedChannel enc = new EmbeddedChannel(new FrameEncoder());
        ByteBuf all = Unpooled.buffer();
        for (Message m : messages) {
            io.netty.util.ReferenceCountUtil.retain(m);
            enc.writeOutbound(m);
            ByteBuf b = enc.readOutbound();
            all.writeBytes(b);
            b.release();
        }
        enc.finishAndReleaseAll();
        return all;
    }

    @Test
    void framesInReadsOfAnySize_decodeExactly_eachFrameInOneDirectBuffer_readsReleased_slabsReused() {
        Random rnd = new Random(5);
        List<Message> sent = frames(rnd);
        ByteBuf bytes = wire(sent);
        byte[] expected = io.netty.buffer.ByteBufUtil.getBytes(bytes);
        FrameDecoder decoder = new FrameDecoder();
        FrameSlabs slabs = new FrameSlabs(FrameSlabs.KEPT);
        decoder.setCumulator(new FrameCumulator(slabs));
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        decoder.blockSize(BS);
        List<ByteBuf> reads = new ArrayList<>();
        while (bytes.isReadable()) {
            // reads of 1 byte to 96 KiB: frame boundaries fall anywhere, length fields split across reads
            int n = Math.min(bytes.readableBytes(), rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(5) : 1 + rnd.nextInt(96 << 10));
            ByteBuf read = PooledByteBufAllocator.DEFAULT.directBuffer(n);
            read.writeBytes(bytes, n);
            reads.add(read);
            ch.writeInbound(read);
        }
        List<Message> got = new ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            got.add((Message) o);
        }
        assertThat(got).hasSize(sent.size());
        // re-encoded, what was decoded is the stream that was sent, byte for byte
        assertThat(java.util.Arrays.equals(io.netty.buffer.ByteBufUtil.getBytes(wire(got)), expected)).isTrue();
        for (int i = 0; i < sent.size(); i++) {
            assertThat(got.get(i).type()).isEqualTo(sent.get(i).type());
            if (got.get(i) instanceof RestoreData d) {
                assertThat(FrameBuffers.directView(d)).as("frame %d in one direct buffer", i).isNotNull();
            }
        }
        int keptBefore = slabs.kept();
        got.forEach(io.netty.util.ReferenceCountUtil::release);
        sent.forEach(io.netty.util.ReferenceCountUtil::release);
        assertThat(slabs.kept()).as("frames released: their slabs wait for reuse").isGreaterThan(keptBefore);
        ch.finishAndReleaseAll();
        assertThat(reads).allSatisfy(r -> assertThat(r.refCnt()).isZero());
    }

    @Test
    void frameBytes_readsTheLengthFieldAcrossBuffers_andIgnoresAnOversizedClaim() {
        ByteBuf a = Unpooled.wrappedBuffer(new byte[] {0, 0x10});
        ByteBuf b = Unpooled.wrappedBuffer(new byte[] {0, 0x02, 9, 9});
        assertThat(FrameCumulator.frameBytes(a, b)).isEqualTo(0x100002 + 4);
        assertThat(FrameCumulator.frameBytes(a, Unpooled.wrappedBuffer(new byte[] {0}))).isZero(); // 3 bytes known
        ByteBuf huge = Unpooled.wrappedBuffer(new byte[] {0x7f, 0, 0, 0});
        assertThat(FrameCumulator.frameBytes(Unpooled.EMPTY_BUFFER, huge)).isZero();
        // the decoder still refuses the oversized frame
        FrameDecoder decoder = new FrameDecoder();
        decoder.setCumulator(new FrameCumulator(new FrameSlabs(1)));
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {0x7f, 0, 0, 0, 2, 1}));
            throw new AssertionError("an oversized frame was accepted");
        } catch (ProtocolException expected) {
            assertThat(expected.getMessage()).contains("over the limit");
        }
        ch.finishAndReleaseAll();
    }

    @Test
    void framesReleasedOneByOneWhileLaterOnesAreHeld_reusedSlabsNeverChangeAHeldFrame() {
        FrameSlabs slabs = decodeHoldingTwo(new Random(17), false);
        assertThat(slabs.kept()).as("slabs were reused, not one per frame").isBetween(1, 6);
        assertThat(slabs.allocated()).isEqualTo(slabs.kept());
    }

    @Test
    void socketReadingIntoTheFramesSlab_decodesExactly_andNeverChangesAHeldFrame() {
        FrameSlabs slabs = decodeHoldingTwo(new Random(23), true);
        assertThat(slabs.kept()).isBetween(1, 6);
        assertThat(slabs.allocated()).as("every slab given back").isEqualTo(slabs.kept());
    }

    /**
     * Decodes three rounds of frames read in random pieces, holding two frames and checking the
     * oldest is unchanged before releasing it (the restore's order: a slab given back too early, or
     * shared with the next frame's start, would change a held frame). With {@code intoSlabs} the
     * reads go where the socket's would: {@link FrameCumulator#readBuffer} when it offers a buffer.
     */
    private static FrameSlabs decodeHoldingTwo(Random rnd, boolean intoSlabs) {
        List<Message> sent = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            sent.addAll(frames(rnd).subList(0, 5)); // RESTORE_DATA only
        }
        ByteBuf bytes = wire(sent);
        byte[] expected = io.netty.buffer.ByteBufUtil.getBytes(bytes);
        ByteBuf again = Unpooled.buffer(); // the frames re-encoded as they are released
        FrameDecoder decoder = new FrameDecoder();
        FrameSlabs slabs = new FrameSlabs(FrameSlabs.KEPT);
        FrameCumulator cumulator = new FrameCumulator(slabs);
        decoder.setCumulator(cumulator);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        decoder.blockSize(BS);
        java.util.ArrayDeque<RestoreData> held = new java.util.ArrayDeque<>();
        java.util.ArrayDeque<byte[]> copies = new java.util.ArrayDeque<>();
        int decoded = 0;
        long inPlace = 0;
        while (bytes.isReadable()) {
            ByteBuf read = intoSlabs ? cumulator.readBuffer(PooledByteBufAllocator.DEFAULT) : null;
            int n = Math.min(bytes.readableBytes(), 1 + rnd.nextInt(read == null ? 96 << 10 : 256 << 10));
            if (read == null) {
                read = PooledByteBufAllocator.DEFAULT.directBuffer(n);
            } else {
                n = Math.min(n, read.writableBytes());
                inPlace += n;
            }
            read.writeBytes(bytes, n);
            ch.writeInbound(read);
            for (Object o; (o = ch.readInbound()) != null; ) {
                RestoreData d = (RestoreData) o;
                held.add(d);
                copies.add(io.netty.buffer.ByteBufUtil.getBytes(d.data()));
                decoded++;
                while (held.size() > 2) {
                    RestoreData old = held.poll();
                    assertThat(java.util.Arrays.equals(io.netty.buffer.ByteBufUtil.getBytes(old.data()), copies.poll()))
                            .as("frame unchanged until its release").isTrue();
                    FrameEncoder.write(old, again);
                    old.release();
                }
            }
        }
        assertThat(decoded).isEqualTo(sent.size());
        while (!held.isEmpty()) {
            RestoreData old = held.poll();
            assertThat(java.util.Arrays.equals(io.netty.buffer.ByteBufUtil.getBytes(old.data()), copies.poll())).isTrue();
            FrameEncoder.write(old, again);
            old.release();
        }
        assertThat(java.util.Arrays.equals(io.netty.buffer.ByteBufUtil.getBytes(again), expected)).as("the stream sent, byte for byte").isTrue();
        if (intoSlabs) {
            assertThat(inPlace).as("most bytes read in place, not copied").isGreaterThan(expected.length * 3L / 4);
        }
        sent.forEach(io.netty.util.ReferenceCountUtil::release);
        ch.finishAndReleaseAll();
        return slabs;
    }
}
