package org.holdfast.client.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct buffers of {@value #SLAB_BYTES} bytes for received frames, shared by all of an agent's
 * connections and reused once the last slice of a frame is released (by whichever thread releases it).
 *
 * <p>Why: a restore receives about a thousand frames of 1 MiB per GiB, and Netty's pool, as its
 * 4 MiB chunks emptied and filled, kept freeing chunks and allocating new ones, each zeroed by the
 * JDK. A slab is allocated (and zeroed) once and then reused: a 1 GiB restore allocates about 24
 * (what its inbox, restore queue and workers hold at once), later restores none.
 *
 * <p>Memory: slabs in use are bounded per connection by its backpressure ({@link ReadPause}: the
 * inbox, the restore's queue); free slabs are kept up to {@code keep} for the whole agent (the
 * {@link #SHARED} pool: {@value #KEPT}, {@value #KEPT_MIB} MiB), and a slab beyond that is freed at
 * once rather than left to the collector (the agent runs at -Xmx256m, and the daemon may run several
 * restores at once). Thread-safe.
 */
final class FrameSlabs {
    /** Slab size: a restore frame (at most about 1.1 MiB) and the spill behind it fit. */
    static final int SLAB_BYTES = 2 << 20;
    /** Smaller frames take no slab. */
    static final int SMALLEST = 256 << 10;
    /** Free slabs the shared pool keeps: what one restore holds at its peak. */
    static final int KEPT = 24;
    /** {@link #KEPT} in MiB (for the javadoc). */
    static final int KEPT_MIB = KEPT * (SLAB_BYTES >> 20);
    /** The pool of the agent's connections. */
    static final FrameSlabs SHARED = new FrameSlabs(KEPT);

    private final ArrayBlockingQueue<ByteBuffer> free;
    private final AtomicLong allocated = new AtomicLong();
    private final AtomicInteger live = new AtomicInteger();
    private final AtomicLong tails = new AtomicLong();

    /** A pool keeping at most {@code keep} free slabs. */
    FrameSlabs(int keep) {
        this.free = new ArrayBlockingQueue<>(keep);
    }

    /** A buffer of {@code bytes} capacity: a reused slab for a large frame that fits one, else one from {@code alloc}. */
    ByteBuf buffer(ByteBufAllocator alloc, int bytes) {
        if (bytes > SLAB_BYTES || bytes < SMALLEST) {
            return alloc.directBuffer(bytes); // small frames (a backup's NEEDs) stay in Netty's thread cache
        }
        ByteBuffer slab = free.poll();
        if (slab == null) {
            slab = ByteBuffer.allocateDirect(SLAB_BYTES);
            allocated.incrementAndGet();
            live.incrementAndGet();
        }
        slab.clear();
        return new Slab(alloc, slab, bytes, this);
    }

    /** Free slabs now. */
    int kept() {
        return free.size();
    }

    /** Slabs allocated since this pool was made (each one zeroed by the JDK once). */
    long allocated() {
        return allocated.get();
    }

    /** Slabs that exist now, in use or kept: the pool's direct memory is {@code live() * SLAB_BYTES}. */
    int live() {
        return live.get();
    }

    /** Socket reads that went straight into a slab ({@link Slab#tail}s made). */
    long tails() {
        return tails.get();
    }

    private void giveBack(ByteBuffer slab) {
        if (!free.offer(slab)) {
            live.decrementAndGet();
            PlatformDependent.freeDirectBuffer(slab); // nothing refers to it: its last buffer was released
        }
    }

    /**
     * True if {@code in} is a {@link Slab#tail} of {@code cumulation}: the socket read into the free
     * end of that very buffer, so its bytes are in place already.
     */
    static boolean isTailOf(ByteBuf in, ByteBuf cumulation) {
        return in instanceof Tail t && t.parent == cumulation;
    }

    /** A frame's buffer over a slab; the slab goes back to its pool when the buffer is deallocated. */
    static final class Slab extends UnpooledDirectByteBuf {
        private final ByteBuffer slab;
        private final int wanted;
        private final FrameSlabs owner;

        Slab(ByteBufAllocator alloc, ByteBuffer slab, int wanted, FrameSlabs owner) {
            super(alloc, slab, SLAB_BYTES); // a view of the slab; never freed or grown by Netty
            this.slab = slab;
            this.wanted = wanted;
            this.owner = owner;
            clear(); // the wrapping constructor counts the whole slab as written
        }

        /** Bytes still to come of what the buffer was taken for (a frame and its spill). */
        int wantedRoom() {
            return Math.max(0, wanted - writerIndex());
        }

        /**
         * A buffer over this one's next {@link #wantedRoom()} bytes from {@code writerIndex}, for the
         * socket to read into; it holds a reference to this buffer until released, so the slab cannot
         * be reused meanwhile. Only one may be out at a time, and nothing else may write this buffer
         * while it is.
         */
        ByteBuf tail(ByteBufAllocator alloc) {
            ByteBuffer region = slab.duplicate().limit(wanted).position(writerIndex()).slice();
            owner.tails.incrementAndGet();
            return new Tail(alloc, region, this);
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            owner.giveBack(slab); // refCnt reached 0: no slice or tail of this frame is left
        }
    }

    /** The free end of a {@link Slab}, handed to the socket as a read buffer. */
    private static final class Tail extends UnpooledDirectByteBuf {
        private final Slab parent;

        Tail(ByteBufAllocator alloc, ByteBuffer region, Slab parent) {
            super(alloc, region, region.capacity());
            this.parent = parent;
            parent.retain();
            clear();
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            parent.release();
        }
    }
}
