package org.holdfast.client.net;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.TlsEngines;
import org.holdfast.common.tls.CertificateFingerprint;

/**
 * One TCP connection to the server's ingest port, used by one flow (backup, restore, listing),
 * inside TLS unless the server runs without it ({@link ServerTrust} says how the server is verified).
 *
 * <p>Inbound frames go into a queue that one consumer thread drains with {@link #receive}; when
 * the queue holds {@link ReadPause#HIGH_WATER} frames the channel stops reading (TCP backpressure), and
 * resumes at {@link ReadPause#LOW_WATER}. {@link #send} may be called from any thread; Netty keeps the
 * order of writes made one after another. Messages taken with {@code receive} belong to the
 * caller (release {@code Blocks}/{@code RestoreData}); {@link #close} releases whatever is still
 * queued. An {@code ERROR} from the server, a decoding error or the connection closing surface
 * from {@code receive} as an {@link AgentException}.
 */
public final class ServerConnection implements AutoCloseable {
    private static final Object CLOSED = new Object();
    /** How long an unknown server has to show it is an HTTP port (an HTTP server answers at once). */
    static final long HTTP_PROBE_MILLIS = 1000;
    /** The ERROR the server sent, if any (set on the event loop). */
    private volatile ErrorMessage serverError;

    private final ServerAddress address;
    private final EventLoopGroup group;
    private final Channel channel;
    private final FrameDecoder decoder;
    private final CertificateFingerprint serverFingerprint;
    private final TlsEngines.Engine tlsEngine;
    private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final ReadPause pause;
    private volatile boolean closed;
    private volatile int protocolVersion;

    private ServerConnection(ServerAddress address, EventLoopGroup group, Channel channel, FrameDecoder decoder,
                             CertificateFingerprint serverFingerprint, TlsEngines.Engine tlsEngine) {
        this.address = address;
        this.tlsEngine = tlsEngine;
        this.serverFingerprint = serverFingerprint;
        this.group = group;
        this.channel = channel;
        this.decoder = decoder;
        this.pause = new ReadPause(channel.config());
    }

    /** Connects to {@code address} over plain TCP (a server with TLS off); see {@link #connect(ServerAddress, Duration, ServerTrust)}. */
    public static ServerConnection connect(ServerAddress address, Duration timeout) {
        return connect(address, timeout, ServerTrust.plain());
    }

    /**
     * Connects to {@code address} and, unless {@code trust} is plain, completes the TLS handshake,
     * verifying the server as {@code trust} says before any frame is sent. An unreachable server or
     * a failed handshake is a {@link ExitCode#NETWORK} failure; a refused certificate is
     * {@link ServerTrust}'s refusal (naming the fingerprints).
     */
    public static ServerConnection connect(ServerAddress address, Duration timeout, ServerTrust trust) {
        return connect(address, timeout, trust, FrameSlabs.SHARED);
    }

    /** {@link #connect(ServerAddress, Duration, ServerTrust)} receiving large frames into slabs of {@code slabs}. */
    static ServerConnection connect(ServerAddress address, Duration timeout, ServerTrust trust, FrameSlabs slabs) {
        EventLoopGroup group = new NioEventLoopGroup(1, r -> {
            Thread t = new Thread(r, "holdfast-net");
            t.setDaemon(true);
            return t;
        });
        FrameDecoder decoder = new FrameDecoder();
        FrameCumulator cumulator = new FrameCumulator(slabs);
        decoder.setCumulator(cumulator); // at most one copy per received byte (restores: frames of about 1 MiB)
        ServerConnection[] self = new ServerConnection[1];
        ServerTrust.Check check = trust.usesTls() ? trust.check(address) : null;
        TlsEngines.Engine engine = check == null ? null : ServerTrust.engine();
        SslHandler ssl = check == null ? null : check.newHandler(engine, ByteBufAllocator.DEFAULT);
        WrongPortSniffer raw = new WrongPortSniffer(address, ssl != null);
        WrongPortSniffer inner = new WrongPortSniffer(address, true);
        Bootstrap b = new Bootstrap().group(group).channel(NioSocketChannel.class);
        if (ssl == null) {
            b.option(ChannelOption.RCVBUF_ALLOCATOR, new SlabReads(cumulator)); // plain TCP: reads go into the frame's slab
        }
        b.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("raw-sniffer", raw); // an HTTP port answers TLS in plain text
                        if (ssl != null) {
                            ssl.setHandshakeTimeoutMillis(Math.max(1, timeout.toMillis()));
                            ch.pipeline().addLast("tls", ssl); // every frame runs inside TLS
                            ch.pipeline().addLast("sniffer", inner); // HTTPS answers inside it
                        }
                        ch.pipeline().addLast("decoder", decoder).addLast("encoder", new FrameEncoder())
                                .addLast("inbox", new Inbox(() -> self[0]));
                    }
                });
        ChannelFuture f = b.connect(address.host(), address.port()).awaitUninterruptibly();
        if (!f.isSuccess()) {
            group.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS);
            Throwable cause = f.cause();
            if (cause instanceof java.io.IOException io) {
                throw IoReasons.failure(ExitCode.NETWORK, "cannot connect to", address, io,
                        "check that the server is running and that --server names its agent port (7070 by default)");
            }
            throw new AgentException(ExitCode.NETWORK, "cannot connect to " + address + ": "
                    + (cause == null ? "unknown reason" : cause.getMessage()),
                    "check that the server is running and that --server names its agent port (7070 by default)", cause);
        }
        if (ssl != null) {
            io.netty.util.concurrent.Future<Channel> hs = ssl.handshakeFuture().awaitUninterruptibly();
            if (!hs.isSuccess()) {
                f.channel().close().awaitUninterruptibly(5, TimeUnit.SECONDS);
                group.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS);
                if (check.refusal() != null) {
                    throw check.refusal();
                }
                if (raw.verdict() != null) {
                    throw raw.verdict();
                }
                Throwable cause = hs.cause();
                throw new AgentException(ExitCode.NETWORK, "TLS handshake with " + address + " failed: "
                        + (cause == null ? "unknown reason" : rootMessage(cause)),
                        "check that --server names the ingest port of a Holdfast server; if that server runs with"
                                + " holdfast.tls.enabled=false, pass --no-tls", cause);
            }
        }
        if (check != null && check.unknownServer()) {
            WrongPortException http = askForHttp(f.channel(), inner, timeout);
            f.channel().close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS);
            throw http != null ? http : check.refusal();
        }
        ServerConnection c = new ServerConnection(address, group, f.channel(), decoder, check == null ? null : check.presented(), engine);
        self[0] = c;
        return c;
    }

    /**
     * Whether the unverified server at the other end of {@code channel} is an HTTP(S) port: one zero
     * byte (no frame, nothing secret) makes an HTTP server answer 400 at once, which {@code inner}
     * recognises; the agent port waits for the rest of a frame, so the answer is null after
     * {@link #HTTP_PROBE_MILLIS}.
     */
    private static WrongPortException askForHttp(Channel channel, WrongPortSniffer inner, Duration timeout) {
        channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0}));
        channel.closeFuture().awaitUninterruptibly(Math.min(timeout.toMillis(), HTTP_PROBE_MILLIS));
        return inner.verdict();
    }

    /**
     * Sends HELLO (offering {@link ProtocolLimits#PROTOCOL_VERSION}) and waits for HELLO_OK, whose
     * version (the lower of the two peers') this connection then speaks: {@link #protocolVersion()}.
     */
    public HelloOk hello(String agentName, String token, Duration timeout) {
        return hello(agentName, token, timeout, ProtocolLimits.PROTOCOL_VERSION);
    }

    /**
     * {@link #hello(String, String, Duration)} offering {@code offered} instead of the newest
     * version: the agent then behaves as an agent of that version would (for interoperability tests).
     */
    public HelloOk hello(String agentName, String token, Duration timeout, int offered) {
        if (offered < ProtocolLimits.MIN_PROTOCOL_VERSION || offered > ProtocolLimits.PROTOCOL_VERSION) {
            throw new AgentException(ExitCode.USAGE, "protocol version " + offered + " is not one this agent speaks ("
                    + ProtocolLimits.MIN_PROTOCOL_VERSION + " to " + ProtocolLimits.PROTOCOL_VERSION + ")", "leave the option out");
        }
        send(new Hello(offered, agentName, token == null ? "" : token));
        HelloOk ok = expect(HelloOk.class, timeout);
        if (ok.protocolVersion() < ProtocolLimits.MIN_PROTOCOL_VERSION || ok.protocolVersion() > offered) {
            throw new AgentException(ExitCode.INTEGRITY, "server speaks protocol version " + ok.protocolVersion()
                    + ", this agent speaks " + ProtocolLimits.MIN_PROTOCOL_VERSION + " to " + offered,
                    "use an agent that matches the server's version");
        }
        protocolVersion = ok.protocolVersion();
        // the decoder accepts the compressed frames of protocol 4 only once both sides agreed on it
        channel.eventLoop().submit(() -> decoder.protocolVersion(ok.protocolVersion())).syncUninterruptibly();
        return ok;
    }

    /** The protocol version agreed in HELLO_OK (0 before {@link #hello}). */
    public int protocolVersion() {
        return protocolVersion;
    }

    /** The SHA-256 fingerprint of the certificate the server presented, or null over plain TCP. */
    public CertificateFingerprint serverFingerprint() {
        return serverFingerprint;
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    /** The TLS engine of this connection, or null over plain TCP. */
    public TlsEngines.Engine tlsEngine() {
        return tlsEngine;
    }

    /** The negotiated TLS protocol and cipher suite, e.g. {@code TLSv1.3 TLS_AES_128_GCM_SHA256}; null over plain TCP. */
    public String tlsCipher() {
        SslHandler ssl = channel.pipeline().get(SslHandler.class);
        if (ssl == null) {
            return null;
        }
        javax.net.ssl.SSLSession s = ssl.engine().getSession();
        return s.getProtocol() + " " + s.getCipherSuite();
    }

    /** The server this connects to. */
    public ServerAddress address() {
        return address;
    }

    /** Writes and flushes {@code m} (ownership of reference-counted messages passes to the channel). */
    public ChannelFuture send(Message m) {
        return channel.writeAndFlush(m);
    }

    /**
     * As {@link #send(Message)}; {@code whenSent} then runs on the event loop with null once the
     * frame is written, or with the reason it was not (so callers need no Netty future).
     */
    public void send(Message m, Consumer<Throwable> whenSent) {
        send(m).addListener(f -> whenSent.accept(f.isSuccess() ? null
                : f.cause() != null ? f.cause() : new IllegalStateException("write cancelled")));
    }

    /**
     * Writes {@code m} without flushing, so that many small frames leave in one system call; a later
     * {@link #flush()} or {@link #send} sends it.
     */
    public ChannelFuture write(Message m) {
        return channel.write(m);
    }

    /** Sends everything written so far. */
    public void flush() {
        channel.flush();
    }

    /**
     * The server's refusal if it sent an ERROR on this connection, else null: a write that failed
     * after it (the server closed) is reported as that reason, not as a network failure.
     */
    public AgentException refusal() {
        ErrorMessage err = serverError;
        return err == null ? null : ServerErrors.rejected(err);
    }

    /** True while the connection is open and nothing has failed it. */
    public boolean isActive() {
        return channel.isActive() && !closed;
    }

    /** Tells the decoder the session's block size, so payloads are checked exactly (runs on the event loop). */
    public void blockSize(int blockSize) {
        channel.eventLoop().submit(() -> decoder.blockSize(blockSize)).syncUninterruptibly();
    }

    /**
     * The next message, or null if none arrived within {@code timeout}. Throws for an ERROR from
     * the server, a malformed frame, or a closed connection.
     */
    public Message poll(Duration timeout) {
        Object o;
        try {
            o = inbox.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentException(ExitCode.INTERNAL, "interrupted while waiting for the server", null, e);
        }
        if (o == null) {
            return null;
        }
        if (o == CLOSED) {
            inbox.add(CLOSED); // every later poll sees it too
            throw new AgentException(ExitCode.NETWORK, "the server closed the connection", "check the server log, then retry");
        }
        if (o instanceof Throwable t) {
            inbox.add(CLOSED);
            throw translate(t);
        }
        pause.taken();
        if (o instanceof ErrorMessage err) {
            throw ServerErrors.rejected(err);
        }
        return (Message) o;
    }

    /** Like {@link #poll} but a timeout is a {@link ExitCode#NETWORK} failure. */
    public Message receive(Duration timeout) {
        Message m = poll(timeout);
        if (m == null) {
            throw new AgentException(ExitCode.NETWORK, "the server did not answer within " + timeout.toSeconds() + " s",
                    "check the server's health and log, then retry");
        }
        return m;
    }

    /** Receives one message that must be of {@code type}; anything else is a protocol violation by the server. */
    public <T extends Message> T expect(Class<T> type, Duration timeout) {
        Message m = receive(timeout);
        if (!type.isInstance(m)) {
            ReferenceCountUtil.release(m);
            throw protocolViolation("expected " + type.getSimpleName() + " but the server sent " + m.type());
        }
        return type.cast(m);
    }

    /** Reports a broken server protocol: sends ERROR BAD_STATE, closes, and returns the exception to throw. */
    public AgentException protocolViolation(String what) {
        if (channel.isActive()) {
            channel.writeAndFlush(ErrorMessage.of(ErrorCode.BAD_STATE, what)).addListener(ChannelFutureListener.CLOSE);
        }
        return new AgentException(ExitCode.INTEGRITY, "server broke the protocol: " + what,
                "check that agent and server versions match; see the server log");
    }

    private AgentException translate(Throwable t) {
        if (t instanceof AgentException a) {
            return a;
        }
        if (t instanceof ProtocolException p) {
            return new AgentException(ExitCode.INTEGRITY, "server sent a malformed frame: " + p.getMessage(),
                    "check that agent and server versions match", p);
        }
        return new AgentException(ExitCode.NETWORK, "connection to " + address + " failed: " + t.getMessage(),
                "check the network and the server, then retry", t);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 500, TimeUnit.MILLISECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        for (Object o; (o = inbox.poll()) != null; ) {
            ReferenceCountUtil.release(o);
        }
    }

    /** Moves inbound frames and failures into the inbox; pauses reading when it is full. */
    private static final class Inbox extends ChannelInboundHandlerAdapter {
        private final java.util.function.Supplier<ServerConnection> owner;

        Inbox(java.util.function.Supplier<ServerConnection> owner) {
            this.owner = owner;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ServerConnection c = owner.get();
            if (c == null || c.closed) {
                ReferenceCountUtil.release(msg);
                return;
            }
            if (msg instanceof ErrorMessage err) {
                c.serverError = err;
            }
            c.inbox.add(msg);
            c.pause.arrived();
            if (c.closed) { // close() may have drained the inbox between our checks
                for (Object o; (o = c.inbox.poll()) != null; ) {
                    ReferenceCountUtil.release(o);
                }
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ServerConnection c = owner.get();
            if (cause instanceof ProtocolException p && ctx.channel().isActive()) {
                ctx.writeAndFlush(ErrorMessage.of(p)).addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.close();
            }
            if (c != null) {
                c.inbox.add(cause);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            ServerConnection c = owner.get();
            if (c != null) {
                c.inbox.add(CLOSED);
            }
            ctx.fireChannelInactive();
        }
    }
}
