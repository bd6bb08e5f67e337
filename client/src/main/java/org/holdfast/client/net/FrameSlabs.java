package org.holdfast.client.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * Direct buffers of {@value #SLAB_BYTES} bytes for received frames, reused once the last slice of
 * a frame is released (by whichever thread releases it).
 *
 * <p>Why: a restore receives about a thousand frames of 1 MiB per GiB, and Netty's pool, as its
 * 4 MiB chunks emptied and filled, kept freeing chunks and allocating new ones, each zeroed by the
 * JDK: the largest single cost of the receiving thread. A slab is allocated (and zeroed) once and
 * then only reused; at most {@value #KEPT} are kept, the rest are left to the collector.
 */
final class FrameSlabs {
    /** Slab size: a restore frame (at most about 1.1 MiB) and the spill behind it fit. */
    static final int SLAB_BYTES = 2 << 20;
    /** Smaller frames take no slab. */
    static final int SMALLEST = 256 << 10;
    /** Free slabs kept: what the connection's inbox and the restore's queue hold at most, with some to spare. */
    static final int KEPT = 24;

    private final ArrayBlockingQueue<ByteBuffer> free = new ArrayBlockingQueue<>(KEPT);

    /** A buffer of {@code bytes} capacity: a reused slab for a large frame that fits one, else one from {@code alloc}. */
    ByteBuf buffer(ByteBufAllocator alloc, int bytes) {
        if (bytes > SLAB_BYTES || bytes < SMALLEST) {
            return alloc.directBuffer(bytes); // small frames (a backup's NEEDs) stay in Netty's thread cache
        }
        ByteBuffer slab = free.poll();
        if (slab == null) {
            slab = ByteBuffer.allocateDirect(SLAB_BYTES);
        }
        slab.clear();
        return new Slab(alloc, slab, this);
    }

    /** Free slabs now (for tests). */
    int kept() {
        return free.size();
    }

    private void giveBack(ByteBuffer slab) {
        free.offer(slab); // full: dropped, the collector frees it
    }

    /** A frame's buffer over a slab; the slab goes back to its owner when the buffer is deallocated. */
    private static final class Slab extends UnpooledDirectByteBuf {
        private final ByteBuffer slab;
        private final FrameSlabs owner;

        Slab(ByteBufAllocator alloc, ByteBuffer slab, FrameSlabs owner) {
            super(alloc, slab, Integer.MAX_VALUE); // a view of the slab; never freed by Netty
            this.slab = slab;
            this.owner = owner;
            clear(); // the wrapping constructor counts the whole slab as written
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            owner.giveBack(slab); // refCnt reached 0: no slice of this frame is left
        }
    }
}
