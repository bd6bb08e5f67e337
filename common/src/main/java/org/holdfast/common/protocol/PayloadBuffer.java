package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.function.Function;

/**
 * The pooled buffer a message builder ({@link Blocks.Builder}, {@link RestoreData.Builder})
 * collects payloads into, and the frame limits it keeps them within. Not thread-safe. The builder
 * owns it until {@link #build} hands it to the message, or {@link #close()} releases it; close
 * after build is a no-op.
 */
final class PayloadBuffer implements AutoCloseable {
    private ByteBuf data;
    private int overhead; // bytes in data that are no payload (frame headers a builder lays out in place)

    PayloadBuffer(ByteBufAllocator alloc, int expectedPayloadBytes) {
        this(alloc.buffer(Math.max(0, expectedPayloadBytes)));
    }

    /** Collects into {@code data} (empty), which it owns from now on. */
    PayloadBuffer(ByteBuf data) {
        this.data = data;
    }

    /** Counts {@code bytes} just written to the buffer as headers, not payload. */
    void headerWritten(int bytes) {
        overhead += bytes;
    }

    /** Payload bytes added so far. */
    int payloadBytes() {
        return data.writerIndex() - overhead;
    }

    /** True if a message of {@code blocks} blocks with {@code length} more payload bytes keeps the frame within the limits. */
    boolean fits(int blocks, int length) {
        return blocks <= ProtocolLimits.MAX_BLOCKS_PER_FRAME
                && (long) payloadBytes() + length <= ProtocolLimits.TARGET_FRAME_PAYLOAD;
    }

    /**
     * The buffer to write the next block's {@code length} payload bytes to, after {@code count}
     * blocks; refuses if the builder was built or closed, or if the block does not fit
     * ({@code frameName} names the message in that error).
     */
    ByteBuf room(String frameName, int count, int length) {
        if (data == null) {
            throw new IllegalStateException("builder already built or closed");
        }
        if (!fits(count + 1, length)) {
            throw new IllegalStateException(frameName + " frame full: " + count + " blocks, " + payloadBytes() + " payload bytes");
        }
        return data;
    }

    /**
     * The message {@code create} makes of the buffer, which it then owns; if {@code create} throws,
     * the buffer is released. Only once.
     */
    <M> M build(Function<ByteBuf, M> create) {
        if (data == null) {
            throw new IllegalStateException("builder already built or closed");
        }
        ByteBuf d = data;
        data = null;
        try {
            return create.apply(d);
        } catch (RuntimeException e) {
            d.release();
            throw e;
        }
    }

    @Override
    public void close() {
        if (data != null) {
            data.release();
            data = null;
        }
    }
}
