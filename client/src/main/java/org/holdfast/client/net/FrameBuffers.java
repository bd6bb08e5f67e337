package org.holdfast.client.net;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.nio.ByteBuffer;
import java.util.List;
import org.holdfast.common.protocol.RestoreData;

/**
 * The few buffer chores the upload and restore flows need from Netty: releasing a received
 * message, reading a RESTORE_DATA payload ({@link BlocksBuffers} builds BLOCKS frames). They live
 * here so that only this package touches Netty; the flows see messages and {@link ByteBuffer}s.
 */
public final class FrameBuffers {
    /** Netty classes a connection initialises first, heaviest static initialiser first (for the agent's warm-up). */
    public static final List<String> TRANSPORT_CLASSES = List.of(
            "io.netty.buffer.PooledByteBufAllocator",
            "io.netty.channel.nio.NioEventLoopGroup",
            "io.netty.channel.socket.nio.NioSocketChannel",
            "io.netty.bootstrap.Bootstrap");

    private FrameBuffers() {
    }

    /** Releases a message taken from a connection if it holds a buffer; null and buffer-less messages are ignored. */
    public static void release(Object message) {
        ReferenceCountUtil.release(message);
    }

    /**
     * The frame's bytes as one direct buffer (positions as in {@link RestoreData#offsets()}), or
     * null when they sit in heap or composite memory: then {@link #copyPayload} them.
     */
    public static ByteBuffer directView(RestoreData d) {
        ByteBuf data = d.data();
        return data.isDirect() && data.nioBufferCount() == 1 ? data.nioBuffer(0, data.writerIndex()) : null;
    }

    /** Copies the frame's bytes from {@code offset} into {@code dst}, filling it up to its limit. */
    public static void copyPayload(RestoreData d, int offset, ByteBuffer dst) {
        d.data().getBytes(offset, dst);
    }
}
