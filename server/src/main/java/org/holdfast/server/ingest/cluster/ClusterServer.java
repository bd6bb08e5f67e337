package org.holdfast.server.ingest.cluster;

import org.holdfast.common.protocol.StaleMarks;
import org.holdfast.common.protocol.StaleMarksTaken;
import java.util.concurrent.RejectedExecutionException;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Register;
import org.holdfast.server.cluster.ClusterSetupException;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.gc.RegistrationCountsFence;
import org.holdfast.server.ingest.IngestTls;
import org.holdfast.server.ingest.PortShutdown;
import org.holdfast.server.ingest.RateLimitedLog;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.TokenAuthenticator;

/**
 * The master's cluster port: accepts worker connections (TLS unless {@code tls} is null), hands
 * each to a {@link MasterLink}. Token checks and registry updates run on one thread (the
 * <em>lane</em>), in arrival order, off the event loop (they read and write RocksDB).
 *
 * <p>{@link #close()}: stop accepting, close every connection (each marks its worker lost), stop
 * the lane, then the event loops. The registry belongs to the caller.
 */
public final class ClusterServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ClusterServer.class.getName());
    /** Refused connections and registrations: at most one line per 10 s, like the agent port, so a flood cannot fill the log. */
    final RateLimitedLog refusalLog = new RateLimitedLog(LOG, java.time.Duration.ofSeconds(10));
    private static final FrameEncoder ENCODER = new FrameEncoder();
    /** A worker that does not finish the TLS handshake is dropped after this. */
    static final long HANDSHAKE_TIMEOUT_SECONDS = 15;
    /** Most bytes a connection may send before its REGISTER is accepted (a REGISTER is under 1 KiB). */
    static final int BEFORE_REGISTER_BYTES = 4096;
    /** Most connections open at once; more are closed at once (a cluster has a handful of workers). */
    static final int MAX_CONNECTIONS = 256;
    /** Most connections open at once from one address: connecting needs no token, so one address must not take every slot. */
    static final int MAX_PER_SOURCE = 32;

    /**
     * Where to listen, TLS (null: plain TCP, labs only), the version REGISTERED names, and the oldest
     * cluster version a worker may register with: {@link Register#GC_FRAMES_VERSION} on a master that
     * keeps its blocks on the workers (their GC runs over the link), else {@link Register#MIN_CLUSTER_VERSION}.
     */
    public record Settings(String host, int port, IngestTls tls, String masterVersion, int minClusterVersion) {
        public Settings {
            if (minClusterVersion < Register.MIN_CLUSTER_VERSION || minClusterVersion > Register.CLUSTER_VERSION) {
                throw new IllegalArgumentException("the oldest cluster version a worker may register with must be in "
                        + Register.MIN_CLUSTER_VERSION + ".." + Register.CLUSTER_VERSION + ", got " + minClusterVersion);
            }
        }

        /** Accepting every cluster version this build speaks (blocks on the master). */
        public Settings(String host, int port, IngestTls tls, String masterVersion) {
            this(host, port, tls, masterVersion, Register.MIN_CLUSTER_VERSION);
        }
    }

    private final Settings settings;
    private final WorkerRegistry registry;
    private final TokenAuthenticator tokens;
    private final AuditLog audit;
    private final ChannelGroup connections = new DefaultChannelGroup("holdfast-cluster", GlobalEventExecutor.INSTANCE);
    private final DedupLinks dedupLinks;
    private final GcGuardLinks gcGuards = new GcGuardLinks();
    private final RangeStores rangeStores = new RangeStores();
    private final GcDeltaLinks gcDeltas;
    private final RangeSweepLinks rangeSweeps = new RangeSweepLinks();
    private final CountsCheckLinks countsChecks = new CountsCheckLinks();
    private final ExecutorService lane = Executors.newSingleThreadExecutor(new DefaultThreadFactory("holdfast-cluster-lane", true));
    private EventLoopGroup boss;
    private EventLoopGroup loops;
    private volatile SealedLogRecorder sealedLogs = SealedLogRecorder.NONE;
    private final SealedLogOrder sealedLogOrder = new SealedLogOrder();
    private volatile TakeoverRecordsSource takeoverRecords = TakeoverRecordsSource.NONE;
    private volatile StaleMarkForwarder staleMarks; // null: none forwarded
    private volatile FreedBlockRecords freedRecords = FreedBlockRecords.NONE;
    // a forward waits for every other worker's engine: off the lane, whose registrations and heartbeats must not wait
    private final ExecutorService forwards = Executors.newSingleThreadExecutor(new DefaultThreadFactory("holdfast-stale-marks", true));
    private Channel serverChannel;
    private boolean closed;
    private volatile RegistrationCountsFence countsFence;

    /** {@code audit} records every registration and refusal ({@code cluster.register}). */
    public ClusterServer(Settings settings, WorkerRegistry registry, TokenAuthenticator tokens, AuditLog audit) {
        this(settings, registry, tokens, audit, new DedupLinks());
    }

    /** As above, putting the registered workers' dedup links into {@code dedupLinks}. */
    public ClusterServer(Settings settings, WorkerRegistry registry, TokenAuthenticator tokens, AuditLog audit, DedupLinks dedupLinks) {
        this(settings, registry, tokens, audit, dedupLinks, new GcDeltaLinks());
    }

    /** As above, putting the registered workers' GC delta links into {@code gcDeltas} (the master's GC sends through them). */
    public ClusterServer(Settings settings, WorkerRegistry registry, TokenAuthenticator tokens, AuditLog audit, DedupLinks dedupLinks,
                         GcDeltaLinks gcDeltas) {
        this.dedupLinks = dedupLinks;
        this.gcDeltas = gcDeltas;
        this.settings = settings;
        this.registry = registry;
        this.tokens = tokens;
        this.audit = audit;
    }

    /**
     * With {@code data=workers}: each registration of cluster version 7 or newer lifts, keeps or sets
     * the worker's counts fence by the counts it reports ({@link RegistrationCountsFence}); without
     * (null, the default) its report is ignored. Set before {@link #start}.
     */
    public void checkCountsWith(RegistrationCountsFence fence) {
        this.countsFence = fence;
    }

    RegistrationCountsFence countsFence() {
        return countsFence;
    }

    /** Binds the port; throws if it is taken. */
    public synchronized void start() {
        boss = new NioEventLoopGroup(1, new DefaultThreadFactory("holdfast-cluster-accept", true));
        loops = new NioEventLoopGroup(1, new DefaultThreadFactory("holdfast-cluster-io", true));
        long lostMillis = registry.settings().lostAfter().toMillis();
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, loops)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (connections.size() >= MAX_CONNECTIONS || fromSource(ch) >= MAX_PER_SOURCE) {
                            refusalLog.warning("refused a cluster connection from " + ch.remoteAddress() + ": " + connections.size()
                                    + " are open already (at most " + MAX_CONNECTIONS + ", " + MAX_PER_SOURCE + " from one address)");
                            ch.close();
                            return;
                        }
                        connections.add(ch);
                        FrameDecoder decoder = new FrameDecoder();
                        decoder.limitBeforeHello(BEFORE_REGISTER_BYTES);
                        decoder.holdAfterHello(); // nothing behind REGISTER is parsed before its token is checked
                        if (settings.tls() != null) {
                            settings.tls().addHandler(ch, HANDSHAKE_TIMEOUT_SECONDS);
                        }
                        // silent for lost-after: the worker is lost, and so is this connection
                        ch.pipeline().addLast("idle", new IdleStateHandler(lostMillis, 0, 0, TimeUnit.MILLISECONDS))
                                .addLast("decoder", decoder)
                                .addLast("encoder", ENCODER)
                                .addLast("link", new MasterLink(ClusterServer.this, decoder));
                    }
                });
        try {
            serverChannel = b.bind(new InetSocketAddress(settings.host(), settings.port())).syncUninterruptibly().channel();
        } catch (Exception e) { // Netty rethrows the checked BindException undeclared: a RuntimeException catch misses it
            shutdownLoops();
            throw new ClusterSetupException("cannot listen for workers on " + settings.host() + ":" + settings.port() + ": "
                    + e.getMessage() + "; free the port or set holdfast.cluster.host and holdfast.cluster.port", e);
        }
        LOG.log(System.Logger.Level.INFO, "listening for workers on {0} ({1})", serverChannel.localAddress(),
                settings.tls() != null ? "TLS" : "plain TCP, no TLS");
    }

    /** Open connections from the address {@code ch} comes from. */
    private long fromSource(SocketChannel ch) {
        java.net.InetAddress source = ch.remoteAddress().getAddress();
        return connections.stream().filter(c -> c.remoteAddress() instanceof InetSocketAddress a && a.getAddress().equals(source)).count();
    }

    /** The bound port (useful with port 0); 0 before start. */
    public int port() {
        Channel c = serverChannel;
        return c == null ? 0 : ((InetSocketAddress) c.localAddress()).getPort();
    }

    Settings settings() {
        return settings;
    }

    /** The oldest cluster version a worker may register with (4 with blocks on the workers). */
    public int minClusterVersion() {
        return settings.minClusterVersion();
    }

    WorkerRegistry registry() {
        return registry;
    }

    TokenAuthenticator tokens() {
        return tokens;
    }

    AuditLog audit() {
        return audit;
    }

    /** The registered workers' range stores (data on workers: ingest and restore with holdfast.cluster.data=workers; not GC yet). */
    public RangeStores rangeStores() {
        return rangeStores;
    }

    /** The registered workers' GC delta links (distributed GC: the master's GC sends through them with holdfast.cluster.data=workers). */
    public GcDeltaLinks gcDeltas() {
        return gcDeltas;
    }

    /** The registered workers' range sweep ends (distributed GC: {@link WorkerSweeps}, which every GC cycle of a master with holdfast.cluster.data=workers calls). */
    public RangeSweepLinks rangeSweeps() {
        return rangeSweeps;
    }

    /** The registered workers' counts check ends (cluster version 7). */
    public CountsCheckLinks countsChecks() {
        return countsChecks;
    }

    /** The registered workers' dedup links (the master's remote dedup workers). */
    public DedupLinks dedupLinks() {
        return dedupLinks;
    }

    /** The registered workers' grace guards (distributed GC: a backup's blocks protected on their owner; {@link RangeReferenceGuard}). */
    public GcGuardLinks gcGuards() {
        return gcGuards;
    }

    /** Where the workers' sealed-log reports (cluster version 7) are recorded from now on: set before {@link #start}. */
    public void recordSealedLogs(SealedLogRecorder recorder) {
        sealedLogs = recorder;
    }

    SealedLogRecorder sealedLogs() {
        return sealedLogs;
    }

    /** The order of the workers' sealed-log recording across each worker's links. */
    SealedLogOrder sealedLogOrder() {
        return sealedLogOrder;
    }

    /** Where TAKEOVER_RECORDS (cluster version 7) is answered from from now on: set before {@link #start}. */
    public void answerTakeoverRecords(TakeoverRecordsSource source) {
        takeoverRecords = source;
    }

    TakeoverRecordsSource takeoverRecords() {
        return takeoverRecords;
    }

    /** Forwards the workers' stale marks (cluster version 8) with {@code forwarder} from now on: set before {@link #start}. */
    public void forwardStaleMarks(StaleMarkForwarder forwarder) {
        staleMarks = forwarder;
    }

    /** Forgets the master's records of the blocks in the workers' stale marks with {@code records} from now on: set before {@link #start}. */
    public void forgetRecordsOfFreed(FreedBlockRecords records) {
        freedRecords = records;
    }

    /**
     * Forwards worker {@code fromWorker}'s checked {@code marks} on this server's forwarding thread, one
     * part at a time, and hands the answer to {@code answer}. First the master forgets its own records of
     * those blocks ({@link FreedBlockRecords}: their possession entries), whatever the forwarding, so a stale
     * engine answer can no longer resolve as proven; if that fails the part is LATER (sent again). Without a
     * forwarder (the workers run no engine of the master's: holdfast.dedup.engine is not cluster) there is
     * nothing to forward to.
     */
    void forwardStaleMarks(long fromWorker, StaleMarks marks, java.util.function.Consumer<StaleMarksTaken> answer) {
        try {
            forwards.execute(() -> {
                StaleMarkForwarder f = staleMarks;
                StaleMarksTaken t;
                try {
                    freedRecords.forget(marks.pbns(), marks.count());
                    t = f == null ? StaleMarksTaken.of(marks.partId(), StaleMarksTaken.TAKEN, "this master forwards no stale marks"
                            + " (holdfast.dedup.engine is not cluster)") : f.forward(fromWorker, marks);
                } catch (RuntimeException e) {
                    t = StaleMarksTaken.of(marks.partId(), StaleMarksTaken.LATER, "the master failed taking the marks: " + e.getMessage());
                }
                answer.accept(t);
            });
        } catch (RejectedExecutionException e) {
            // closing: the worker keeps the part and sends it to the next master
        }
    }

    /**
     * Puts worker {@code workerId}'s new dedup {@code link} into service: at once without a forwarder, else on the
     * forwarding thread once the forwarder delivered what the worker is owed ({@link StaleMarkForwarder#readyForService}),
     * so that its engine forgets the blocks freed while it was away before it answers a lookup.
     */
    void dedupLinkUp(long workerId, String nodeName, DedupLink link, OtherRangePbns others) {
        StaleMarkForwarder f = staleMarks;
        if (f == null) {
            dedupLinks.add(workerId, link);
            return;
        }
        try {
            forwards.execute(() -> {
                if (f.readyForService(workerId, nodeName, link, others)) {
                    dedupLinks.add(workerId, link);
                }
            });
        } catch (RejectedExecutionException e) {
            // closing: the link ends with the server
        }
    }

    ExecutorService lane() {
        return lane;
    }

    /** See the class comment for the order. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        PortShutdown.closeChannels(serverChannel, connections);
        forwards.shutdownNow(); // a forward cut short is not answered: the worker sends the part again
        PortShutdown.stopWorkers(lane, 10, () -> {
            // a registration still on the lane finishes on its daemon thread; its connection is closed already
        });
        shutdownLoops();
    }

    private void shutdownLoops() {
        PortShutdown.stopLoops(boss, loops);
    }
}
