package org.holdfast.client.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * The direct buffers one upload builds its BLOCKS frames in, reused once the socket has taken a
 * frame's bytes. A frame of a full backup is half a megabyte or more: taken from Netty's pool
 * and given back each time, such buffers keep emptying the pool's 4 MiB chunks, which are then
 * freed and made again (zero-filled), a fifth of the agent's network CPU. Small frames (scattered
 * changes) take {@link #oneOff} buffers of their own size instead. Thread-safe.
 */
public final class BlocksBuffers implements AutoCloseable {
    private final ConcurrentLinkedQueue<ByteBuf> free = new ConcurrentLinkedQueue<>();
    private final AtomicInteger idle = new AtomicInteger();
    private final int capacity;
    private final int keep;
    private volatile boolean closed;

    /**
     * Buffers of {@code capacity} bytes at first (a typical compressed frame: the frames waiting
     * for the socket hold a window's worth of them, so worst-case sizes would double the memory
     * touched), grown when a frame needs more and kept at that size; at most {@code keep} kept
     * idle: no more than the frames of about that size that can be in flight at once, so the idle
     * ones never hold more memory than the busiest moment did.
     */
    public BlocksBuffers(int capacity, int keep) {
        this.capacity = capacity;
        this.keep = keep;
    }

    /** A builder writing into an idle buffer, or a new one (for a frame of at least half a batch). */
    public Blocks.Builder builder() {
        ByteBuf b = free.poll();
        if (b == null) {
            b = PooledByteBufAllocator.DEFAULT.directBuffer(capacity, ProtocolLimits.MAX_FRAME); // the limit marks ours
        } else {
            idle.decrementAndGet();
        }
        return Blocks.builder(b);
    }

    /** A builder for a small frame, in a buffer from Netty's pool sized for {@code payloadBytes}, not kept for reuse. */
    public Blocks.Builder oneOff(int payloadBytes) {
        return Blocks.builder(PooledByteBufAllocator.DEFAULT, payloadBytes);
    }

    /**
     * Sends {@code blocks} (built by {@link #builder()}) on {@code conn}; {@code whenSent} runs as
     * {@link ServerConnection#send(org.holdfast.common.protocol.Message, Consumer)} says, and then
     * the buffer is reused if the frame went out and nothing else holds it.
     */
    public void send(ServerConnection conn, Blocks blocks, Consumer<Throwable> whenSent) {
        ByteBuf data = blocks.data().retain(); // ours: the channel releases the message's own reference
        conn.send(blocks, cause -> {
            try {
                whenSent.accept(cause);
            } finally {
                giveBack(data, cause == null);
            }
        });
    }

    private void giveBack(ByteBuf data, boolean sent) {
        // a frame that failed, a buffer someone still holds or a one-off is not reused
        if (sent && !closed && data.refCnt() == 1 && data.maxCapacity() == ProtocolLimits.MAX_FRAME) {
            if (idle.incrementAndGet() <= keep) {
                data.clear();
                free.add(data);
                if (closed) {
                    drain(); // close() may have drained before this buffer came back
                }
                return;
            }
            idle.decrementAndGet();
        }
        data.release();
    }

    private void drain() {
        for (ByteBuf b; (b = free.poll()) != null; ) {
            b.release();
        }
    }

    /** Buffers waiting for reuse now. */
    int idleBuffers() {
        return idle.get();
    }

    /** Releases the idle buffers; frames still being sent release theirs when they are done. */
    @Override
    public void close() {
        closed = true;
        drain();
    }
}
