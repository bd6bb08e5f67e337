package org.holdfast.server.ingest;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import org.holdfast.common.protocol.FrameDecoder;

/**
 * Drops read requests while the decoder behind it wants no input (a HELLO being checked, or no room
 * in the in-flight budget). Without it, {@code ByteToMessageDecoder} asks for another read after
 * every read that completed no frame, even with autoRead off, and a connection that claimed a
 * large frame would be read to the end of it whatever the budget said. Reading resumes when the
 * handler turns autoRead back on.
 */
final class ReadGate extends ChannelOutboundHandlerAdapter {
    private final FrameDecoder decoder;

    ReadGate(FrameDecoder decoder) {
        this.decoder = decoder;
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        if (!decoder.wantsNoInput()) {
            ctx.read();
        }
    }
}
