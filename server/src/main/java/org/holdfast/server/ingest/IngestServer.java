package org.holdfast.server.ingest;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;

/**
 * The agent-facing TCP server (protocol v1, docs/protocol.md).
 *
 * <p>{@link #close()} shuts down in this order: stop accepting, close every connection (their
 * sessions are abandoned on the session lanes), wait for the session pool to finish, then stop the
 * event loops, so that no session touches the stores after this returns. The stores
 * themselves belong to the caller and are closed after this.
 */
public final class IngestServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(IngestServer.class.getName());
    private static final FrameEncoder ENCODER = new FrameEncoder();
    /** A client that connects but does not finish the TLS handshake is dropped after this. */
    static final long HANDSHAKE_TIMEOUT_SECONDS = 15;
    /** A connection refused for a connection maximum is closed after this even if the client never reads its error. */
    static final long REFUSAL_GRACE_SECONDS = 5;

    private final IngestSettings settings;
    private final IngestServices services;
    private final VolumeLocks volumeLocks = new VolumeLocks();
    private final RunningBackups runningBackups;
    private final IngestStats stats = new IngestStats();
    private final AtomicLong sessionIds;
    private final ChannelGroup connections = new DefaultChannelGroup("holdfast-ingest", GlobalEventExecutor.INSTANCE);
    private final ExecutorService sessionPool;
    private final PayloadDigester digester;
    private final InflightBudget inflight;
    private final ConnectionLimits connectionLimits;
    private final RateLimitedLog limitLog = new RateLimitedLog(LOG, java.time.Duration.ofSeconds(10));
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private Channel serverChannel;
    private boolean closed;

    public IngestServer(IngestSettings settings, IngestServices services) {
        this.settings = settings;
        this.services = services;
        this.sessionIds = new AtomicLong(services.clock().millis() << 16);
        this.runningBackups = new RunningBackups(services.clock()::millis);
        this.sessionPool = new ThreadPoolExecutor(settings.sessionThreads(), settings.sessionThreads(), 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), new DefaultThreadFactory("holdfast-session", true));
        this.digester = new PayloadDigester(Math.max(1, Runtime.getRuntime().availableProcessors()));
        this.inflight = new InflightBudget(settings.limits().inflightBytes());
        this.connectionLimits = new ConnectionLimits(settings.limits().maxConnections(), settings.limits().maxConnectionsPerSource());
    }

    /** Binds the port; throws if it is taken. */
    public synchronized void start() {
        boss = new NioEventLoopGroup(1, new DefaultThreadFactory("holdfast-ingest-accept", true));
        workers = new NioEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
                new DefaultThreadFactory("holdfast-ingest-io", true));
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 128)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(4 << 20, 8 << 20))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        stats.connections.incrementAndGet();
                        InetAddress source = ch.remoteAddress().getAddress();
                        String refusal = connectionLimits.admit(source);
                        if (refusal != null) {
                            refuse(ch, refusal);
                            return;
                        }
                        ch.closeFuture().addListener(f -> connectionLimits.release(source));
                        FrameDecoder decoder = new FrameDecoder();
                        decoder.limitBeforeHello(settings.limits().beforeHelloBytes());
                        if (settings.tls() != null) {
                            // first, so that nothing but a completed handshake's plaintext reaches the
                            // decoder: a plain-TCP client fails the handshake and is closed there
                            settings.tls().addHandler(ch, HANDSHAKE_TIMEOUT_SECONDS);
                        }
                        ch.pipeline().addLast("idle", new IdleStateHandler(0, 0, settings.idleTimeout().toMillis(), TimeUnit.MILLISECONDS))
                                .addLast("read-gate", new ReadGate(decoder))
                                .addLast("decoder", decoder)
                                .addLast("encoder", ENCODER)
                                .addLast("connection", new ConnectionHandler(IngestServer.this, decoder));
                    }
                });
        try {
            serverChannel = b.bind(new InetSocketAddress(settings.host(), settings.port())).syncUninterruptibly().channel();
        } catch (Exception e) { // Netty rethrows the checked BindException undeclared: a RuntimeException catch misses it
            shutdownLoops();
            throw new AgentPortUnavailableException("cannot listen for agents on " + settings.host() + ":" + settings.port() + ": "
                    + e.getMessage() + "; free the port or set holdfast.ingest.host and holdfast.ingest.port", e);
        }
        LOG.log(System.Logger.Level.INFO, "listening for agents on {0} ({1})", serverChannel.localAddress(),
                settings.tls() != null ? "TLS, " + settings.tls().describe() : "plain TCP, no TLS");
    }

    /**
     * Answers a connection over a connection maximum with LIMIT_EXCEEDED and closes it (after the
     * TLS handshake when TLS is on, so the agent can read why; a client that does not finish it is
     * dropped after {@link #REFUSAL_GRACE_SECONDS}). Nothing it sends is decoded.
     */
    private void refuse(SocketChannel ch, String why) {
        stats.limited.incrementAndGet();
        limitLog.info("refused agent connection from " + ch.remoteAddress() + ": " + why);
        if (settings.tls() != null) {
            settings.tls().addHandler(ch, REFUSAL_GRACE_SECONDS);
        }
        ch.pipeline().addLast("encoder", ENCODER).addLast("refusal", new io.netty.channel.ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(io.netty.channel.ChannelHandlerContext ctx) {
                ctx.writeAndFlush(org.holdfast.common.protocol.ErrorMessage.of(org.holdfast.common.protocol.ErrorCode.LIMIT_EXCEEDED, why))
                        .addListener(io.netty.channel.ChannelFutureListener.CLOSE);
                ctx.executor().schedule(() -> ctx.close(), REFUSAL_GRACE_SECONDS, TimeUnit.SECONDS);
            }

            @Override
            public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                io.netty.util.ReferenceCountUtil.release(msg);
            }

            @Override
            public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
                ctx.close();
            }
        });
    }

    /** Notes a connection closed by a resource limit; the log line is rate limited so a flood cannot flood the log. */
    void limited(String what) {
        stats.limited.incrementAndGet();
        limitLog.info(what);
    }

    /** Tells the statistics observer something; its failure must not end the connection. */
    void observe(java.util.function.Consumer<IngestObserver> event) {
        try {
            event.accept(services.observer());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not record agent statistics: " + e);
        }
    }

    InflightBudget inflight() {
        return inflight;
    }

    /** Agent connections open now (refused ones not counted). */
    public int openConnections() {
        return connectionLimits.open();
    }

    /** Bytes of the in-flight budget reserved now. */
    public long inflightBytes() {
        return inflight.used();
    }

    /** The bound port (useful with port 0); 0 while not listening (before start, and on a worker, which never starts it). */
    public int port() {
        Channel c = serverChannel;
        return c == null ? 0 : ((InetSocketAddress) c.localAddress()).getPort();
    }

    public IngestSettings settings() {
        return settings;
    }

    public IngestServices services() {
        return services;
    }

    public IngestStats stats() {
        return stats;
    }

    public VolumeLocks volumeLocks() {
        return volumeLocks;
    }

    /** The backups in progress on this port. */
    public RunningBackups runningBackups() {
        return runningBackups;
    }

    ExecutorService sessionPool() {
        return sessionPool;
    }

    PayloadDigester digester() {
        return digester;
    }

    long nextSessionId() {
        return sessionIds.incrementAndGet();
    }

    /** See the class comment for the order. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        PortShutdown.closeChannels(serverChannel, connections);
        PortShutdown.stopWorkers(sessionPool, 30, () -> {
            LOG.log(System.Logger.Level.WARNING, "session threads still busy after 30 s; closing anyway");
            sessionPool.shutdownNow();
        });
        shutdownLoops();
        digester.close();
    }

    private void shutdownLoops() {
        PortShutdown.stopLoops(boss, workers);
    }
}
