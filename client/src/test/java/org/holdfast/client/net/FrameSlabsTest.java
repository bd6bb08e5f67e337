package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The slab pool: reuse (allocation counts), its bound on kept slabs, and tails that hold their slab. */
class FrameSlabsTest {
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final int FRAME = (1 << 20) + FrameCumulator.SPILL;

    @Test
    void aReleasedSlabIsReused_notAllocatedAgain() {
        FrameSlabs slabs = new FrameSlabs(4);
        for (int i = 0; i < 100; i++) {
            ByteBuf b = slabs.buffer(ALLOC, FRAME);
            b.writeInt(i);
            b.release();
        }
        assertThat(slabs.allocated()).isEqualTo(1);
        assertThat(slabs.kept()).isEqualTo(1);
        assertThat(slabs.live()).isEqualTo(1);
    }

    @Test
    void slabsBeyondTheBound_areFreedWhenReleased_notKept() {
        FrameSlabs slabs = new FrameSlabs(3);
        List<ByteBuf> held = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            held.add(slabs.buffer(ALLOC, FRAME));
        }
        assertThat(slabs.live()).isEqualTo(10);
        held.forEach(ByteBuf::release);
        assertThat(slabs.kept()).isEqualTo(3);
        assertThat(slabs.live()).as("the other seven were freed, not left to the collector").isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            held.set(i, slabs.buffer(ALLOC, FRAME));
        }
        assertThat(slabs.allocated()).as("the kept ones serve the next frames").isEqualTo(10);
        held.subList(0, 3).forEach(ByteBuf::release);
    }

    @Test
    void smallAndOversizedFrames_takeNoSlab() {
        FrameSlabs slabs = new FrameSlabs(2);
        ByteBuf small = slabs.buffer(ALLOC, FrameSlabs.SMALLEST - 1);
        ByteBuf huge = slabs.buffer(ALLOC, FrameSlabs.SLAB_BYTES + 1);
        assertThat(small.capacity()).isGreaterThanOrEqualTo(FrameSlabs.SMALLEST - 1);
        assertThat(huge.capacity()).isGreaterThanOrEqualTo(FrameSlabs.SLAB_BYTES + 1);
        assertThat(slabs.allocated()).isZero();
        small.release();
        huge.release();
        assertThat(slabs.kept()).isZero();
    }

    @Test
    void aSliceOrATailKeepsItsSlab_untilReleased() {
        FrameSlabs slabs = new FrameSlabs(2);
        FrameSlabs.Slab b = (FrameSlabs.Slab) slabs.buffer(ALLOC, FRAME);
        b.writeLong(42);
        ByteBuf frame = b.retainedSlice(0, 8);
        ByteBuf tail = b.tail(ALLOC);
        assertThat(tail.capacity()).isEqualTo(FRAME - 8);
        assertThat(FrameSlabs.isTailOf(tail, b)).isTrue();
        assertThat(FrameSlabs.isTailOf(tail, frame)).isFalse();
        tail.writeLong(7); // lands right behind the cumulation's bytes
        assertThat(b.getLong(8)).isEqualTo(7);
        b.release();
        assertThat(slabs.kept()).as("a slice and a tail still hold it").isZero();
        frame.release();
        assertThat(slabs.kept()).isZero();
        ByteBuf next = slabs.buffer(ALLOC, FRAME);
        assertThat(slabs.allocated()).as("held slab not handed out again").isEqualTo(2);
        tail.release();
        assertThat(slabs.kept()).isEqualTo(1);
        next.release();
        assertThat(slabs.kept()).isEqualTo(2);
    }
}
