package org.holdfast.client.net;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.nio.charset.StandardCharsets;

/**
 * Looks at the first bytes the server sends and recognises the answer of a port that is not the
 * agent port: an HTTP status line ({@code HTTP/1.1 400 ...}) means {@code --server} names the
 * server's web port; a TLS record (content type 20 to 23, version 3.x) on a plain-TCP connection
 * means the port wants TLS. Either becomes a {@link WrongPortException} (exit code network) that
 * says which port to use, instead of the frame decoder's "bad frame" or a failed handshake.
 *
 * <p>One instance sits first in the pipeline (it sees the raw bytes: an HTTP server answers a TLS
 * ClientHello with a plain-text 400) and, with TLS, one more right after the TLS handler (an
 * HTTPS server answers the HELLO frame inside TLS). Each removes itself after the first read;
 * bytes that look like the agent port's go on unchanged. {@link #verdict()} lets the code that waits for the handshake
 * report the real reason after the channel closed.
 */
final class WrongPortSniffer extends ChannelInboundHandlerAdapter {
    /** The agent port when {@code holdfast.ingest.port} is not set. */
    static final int DEFAULT_AGENT_PORT = 7070;
    private static final byte[] HTTP = "HTTP/".getBytes(StandardCharsets.US_ASCII);

    private final ServerAddress address;
    private final boolean expectTls;
    private volatile WrongPortException verdict;

    /**
     * @param expectTls true if this instance sees raw bytes of a connection that should be TLS (a
     *                  TLS record is then the expected answer, not a wrong port)
     */
    WrongPortSniffer(ServerAddress address, boolean expectTls) {
        this.address = address;
        this.expectTls = expectTls;
    }

    /** The wrong-port failure recognised, or null. */
    WrongPortException verdict() {
        return verdict;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ctx.pipeline().remove(this);
        if (msg instanceof ByteBuf b) {
            verdict = recognise(b, address, expectTls);
        }
        if (verdict != null) {
            io.netty.util.ReferenceCountUtil.release(msg);
            ctx.fireExceptionCaught(verdict);
            ctx.close();
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** What the first bytes {@code b} of an answer say about the port, or null if nothing wrong is seen. */
    static WrongPortException recognise(ByteBuf b, ServerAddress address, boolean expectTls) {
        int at = b.readerIndex();
        if (b.readableBytes() >= HTTP.length) {
            boolean http = true;
            for (int i = 0; i < HTTP.length; i++) {
                http &= b.getByte(at + i) == HTTP[i];
            }
            if (http) {
                return new WrongPortException(address + " answered in HTTP: this is the server's HTTP"
                        + " port; the agent port is " + DEFAULT_AGENT_PORT + " by default",
                        "the HTTP port serves the web console and the REST API; pass --server " + address.host() + ":"
                                + DEFAULT_AGENT_PORT + ", or the server's holdfast.ingest.port if it was changed");
            }
        }
        if (!expectTls && b.readableBytes() >= 3) {
            int type = b.getUnsignedByte(at);
            if (type >= 20 && type <= 23 && b.getUnsignedByte(at + 1) == 3 && b.getUnsignedByte(at + 2) <= 4) {
                return new WrongPortException(address + " answered with TLS to a plain-TCP connection",
                        "run without --no-tls (and check that --server names the agent port, " + DEFAULT_AGENT_PORT
                                + " by default)");
            }
        }
        return null;
    }
}
