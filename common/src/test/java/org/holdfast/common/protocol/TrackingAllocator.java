package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.ArrayList;
import java.util.List;

/** An allocator that remembers every buffer it made, so a test can assert that all were released (a deterministic leak check). */
final class TrackingAllocator extends AbstractByteBufAllocator {
    private final List<ByteBuf> all = new ArrayList<>();
    private long largest;

    TrackingAllocator() {
        super(false);
    }

    @Override
    protected synchronized ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    protected synchronized ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity));
    }

    private ByteBuf track(ByteBuf b) {
        all.add(b);
        largest = Math.max(largest, b.capacity());
        return b;
    }

    @Override
    public boolean isDirectBufferPooled() {
        return false;
    }

    synchronized int allocations() {
        return all.size();
    }

    /** Largest initial capacity handed out. */
    synchronized long largest() {
        return largest;
    }

    /** Capacity of the buffers handed out and not released yet: what is held now. */
    synchronized long outstanding() {
        return all.stream().filter(b -> b.refCnt() > 0).mapToLong(ByteBuf::capacity).sum();
    }

    synchronized void assertAllReleased() {
        for (ByteBuf b : all) {
            assertThat(b.refCnt()).as("refCnt of a %d-byte buffer", b.capacity()).isZero();
        }
    }
}
