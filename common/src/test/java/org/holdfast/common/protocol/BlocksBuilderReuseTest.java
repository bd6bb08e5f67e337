package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Consecutive builders on a thread share one set of per-block arrays, and a built message never sees the next builder's blocks. */
class BlocksBuilderReuseTest {
    private static final byte[] PAYLOAD = new byte[4096];

    private static Blocks frame(long lbn, int blocks) {
        Blocks.Builder b = Blocks.builder(Unpooled.directBuffer(1 << 16));
        for (int i = 0; i < blocks; i++) {
            b.add(lbn + i, PayloadCodec.RAW, PAYLOAD, i, 100 + i);
        }
        return b.build();
    }

    private static byte[] wire(Blocks b) {
        var out = Unpooled.buffer();
        FrameEncoder.write(b, out);
        return ByteBufUtil.getBytes(out);
    }

    @Test
    void hundredFramesOnOneThread_makeOneSetOfArrays() throws Exception {
        AtomicLong made = new AtomicLong();
        Thread t = new Thread(() -> {
            long before = Blocks.Builder.scratchMade();
            for (int f = 0; f < 100; f++) {
                frame(f * 1000L, 1 + f % 50).release();
            }
            try (Blocks.Builder closed = Blocks.builder(Unpooled.directBuffer(64))) {
                closed.add(1, PayloadCodec.RAW, PAYLOAD, 0, 10); // closed without build: gives its arrays back too
            }
            frame(5, 3).release();
            made.set(Blocks.Builder.scratchMade() - before);
        });
        t.start();
        t.join();
        assertThat(made.get()).isEqualTo(1);
    }

    @Test
    void aBuiltMessage_keepsItsBlocks_whileTheNextBuilderReusesTheArrays() {
        Blocks first = frame(100, 40);
        byte[] firstWire = wire(first);
        long[] firstLbns = first.lbns().clone();
        Blocks.Builder next = Blocks.builder(Unpooled.directBuffer(1 << 16));
        for (int i = 0; i < 60; i++) {
            next.add(9000 + i, PayloadCodec.ZSTD, PAYLOAD, 7, 50);
        }
        assertThat(first.lbns()).containsExactly(firstLbns);
        assertThat(first.isFramed()).isTrue();
        assertThat(wire(first)).isEqualTo(firstWire);
        Blocks second = next.build();
        assertThat(second.count()).isEqualTo(60);
        assertThat(second.lbns()[0]).isEqualTo(9000);
        first.release();
        second.release();
    }

    @Test
    void aBuilderUsedAfterBuild_refusesToAdd_andCannotTouchTheNextBuildersBlocks() {
        Blocks.Builder old = Blocks.builder(Unpooled.directBuffer(1 << 16));
        old.add(1, PayloadCodec.RAW, PAYLOAD, 0, 10);
        Blocks built = old.build();
        Blocks.Builder next = Blocks.builder(Unpooled.directBuffer(1 << 16)).add(77, PayloadCodec.RAW, PAYLOAD, 0, 10);
        assertThatThrownBy(() -> old.add(2, PayloadCodec.RAW, PAYLOAD, 0, 10)).isInstanceOf(IllegalStateException.class);
        Blocks second = next.build();
        assertThat(second.lbns()).containsExactly(77L);
        assertThat(second.lengths()).containsExactly(10);
        built.release();
        second.release();
    }
}
