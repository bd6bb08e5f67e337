package org.holdfast.client.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.MaxMessagesRecvByteBufAllocator;

/**
 * The read buffers of a plain-TCP connection: the free end of the frame buffer its
 * {@link FrameCumulator} is filling when there is one, so the socket's bytes land where the frame
 * needs them; else Netty's adaptive buffers.
 *
 * <p>Why: a restore's frame of about 1 MiB used to arrive in sixteen 64 KiB read buffers, each taken
 * from and given back to Netty's pool and copied into the frame's buffer: that copy and the pool's
 * bookkeeping were a third of the receiving thread. Only the frame decoder may see these buffers,
 * so this is not for TLS connections (the TLS handler reads the socket there).
 */
final class SlabReads implements MaxMessagesRecvByteBufAllocator {
    private final AdaptiveRecvByteBufAllocator ordinary = new AdaptiveRecvByteBufAllocator();
    private final FrameCumulator cumulator;

    SlabReads(FrameCumulator cumulator) {
        this.cumulator = cumulator;
    }

    @Override
    public int maxMessagesPerRead() {
        return ordinary.maxMessagesPerRead();
    }

    @Override
    public MaxMessagesRecvByteBufAllocator maxMessagesPerRead(int maxMessagesPerRead) {
        ordinary.maxMessagesPerRead(maxMessagesPerRead);
        return this;
    }

    @Override
    public Handle newHandle() {
        return new DelegatingHandle(ordinary.newHandle()) {
            @Override
            public ByteBuf allocate(ByteBufAllocator alloc) {
                ByteBuf tail = cumulator.readBuffer(alloc);
                return tail != null ? tail : delegate().allocate(alloc);
            }
        };
    }
}
