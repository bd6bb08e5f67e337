package org.holdfast.server.ingest.cluster;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.CountsCheck;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupForget;
import org.holdfast.common.protocol.DedupLookup;
import org.holdfast.common.protocol.DedupProbe;
import org.holdfast.common.protocol.DedupRecord;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.common.protocol.SealedLogsRecorded;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.common.protocol.StaleMarksTaken;
import org.holdfast.common.protocol.TakeoverRecordsPart;
import org.holdfast.common.protocol.TlsEngines;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.WorkerCapacity;
import org.holdfast.server.cluster.WorkerLoad;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerStatus;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.store.SealedLogs;

/**
 * A worker's link to its master: connects (TLS, the master's certificate checked by
 * {@link MasterTrust}), sends REGISTER with the token read from the token file (read again on every
 * attempt, so a replaced token needs no restart), then a HEARTBEAT every interval REGISTERED named.
 * Whenever the connection fails or ends it tries again after a backoff that doubles from
 * {@code minBackoff} to {@code maxBackoff} and starts over after a registration. Every failure is
 * logged once per attempt with what to do about it. One event loop thread does all of it. With a
 * {@link DedupWorker}, each registered connection also serves the master's dedup calls
 * ({@link DedupService}, its own thread); with {@link WorkerRangeData}, the master's data calls over
 * the range of its REGISTERED ({@link RangeDataService}, its own thread).
 */
public final class WorkerConnector implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(WorkerConnector.class.getName());
    private static final FrameEncoder ENCODER = new FrameEncoder();
    /** Silence from the master before REGISTERED, and after it this many heartbeat intervals, ends the connection. */
    static final int SILENT_INTERVALS = 5;
    /** Unwritten bytes over which the link stops reading requests (backpressure, {@link LinkBackpressure}): two full answers. */
    static final int WRITE_HIGH_WATER = 32 << 20;
    /** Unwritten bytes under which it reads again: one full answer. */
    static final int WRITE_LOW_WATER = 16 << 20;

    /**
     * Where the master is, the local address to connect from ({@code localHost}; null or a wildcard:
     * any), who this node is, how to prove it (token file) and check the master ({@code trust};
     * null: plain TCP, labs only), what to report, and the reconnect backoff.
     */
    public record Settings(String masterHost, int masterPort, String localHost, String nodeName, Path tokenFile, MasterTrust trust,
                           String tlsEngine, String softwareVersion, Duration connectTimeout, Duration minBackoff, Duration maxBackoff) {
        boolean bindsLocally() {
            return localHost != null && !localHost.isBlank() && !localHost.equals("0.0.0.0") && !localHost.equals("::");
        }
    }

    private final Settings settings;
    private final LoadProbe probe;
    private final LazyDedupWorker dedup;
    private final WorkerRangeData rangeData;
    private final WorkerGcMetadata gcMetadata;
    private final WorkerRangeSweep rangeSweep; // null without range data and GC metadata
    private final EventLoopGroup loop = new NioEventLoopGroup(1, new DefaultThreadFactory("holdfast-worker-link", true));
    private final SslContext tls;
    private final TlsEngines.Engine engine;
    /**
     * The cluster version REGISTER offers: the newest, until a master refuses it as too new; the newest
     * again once a registered link ends (the master may come back upgraded). Event loop only.
     */
    private int offer = Register.CLUSTER_VERSION;
    /** A start-over of the index not yet reported to a master (kept across connections of this process). */
    private final AtomicReference<DedupService.StartOver> unreported = new AtomicReference<>();
    private volatile WorkerStatus status = WorkerStatus.STARTING;
    private volatile boolean closed;
    private long backoffMillis;
    private volatile Channel channel;
    // told when the master acknowledged a message, with the time it was sent (null: nobody asks)
    private volatile MasterLease lease;

    public WorkerConnector(Settings settings, LoadProbe probe) {
        this(settings, probe, null);
    }

    /**
     * A worker that also serves the master's dedup calls with {@code dedup} (its own engine; null:
     * none). Registered as new (epoch 1), as a worker id its index was not built for (a replacement),
     * or after registrations its index did not see, it starts that engine over before serving
     * ({@link LazyDedupWorker#claim}): such an index could name PBNs freed since.
     */
    public WorkerConnector(Settings settings, LoadProbe probe, LazyDedupWorker dedup) {
        this(settings, probe, dedup, null);
    }

    /**
     * As above, and with {@code rangeData} (null: none) each registered connection also serves the
     * master's data calls over the range of its REGISTERED ({@link RangeDataService}, its own
     * thread), which ingest and restore use on a master with {@code holdfast.cluster.data=workers}.
     * {@code rangeData} belongs to the caller, who closes it after this connector.
     */
    public WorkerConnector(Settings settings, LoadProbe probe, LazyDedupWorker dedup, WorkerRangeData rangeData) {
        this(settings, probe, dedup, rangeData, null);
    }

    /**
     * As above, and with {@code gcMetadata} (null: none) each registered connection also logs the
     * master's GC deltas over the range of its REGISTERED ({@link GcDeltaService}, its own thread)
     * and protects the blocks of the master's backups in progress there ({@link GcGuardService}, another).
     * The master's GC sends them with {@code holdfast.cluster.data=workers}. {@code gcMetadata} belongs to the caller, who closes it after
     * this connector. With both {@code rangeData} and {@code gcMetadata}, each registered connection
     * also sweeps the range when the master asks ({@link GcSweepService}, its own thread; one
     * {@link WorkerRangeSweep} per connector, which tells {@code dedup} what it frees).
     */
    public WorkerConnector(Settings settings, LoadProbe probe, LazyDedupWorker dedup, WorkerRangeData rangeData,
                           WorkerGcMetadata gcMetadata) {
        this(settings, probe, dedup, rangeData, gcMetadata, WorkerRangeSweep.Settings.DEFAULTS);
    }

    /**
     * As above, sweeping with {@code sweep}: the node's {@code holdfast.gc.sweep-batch-chunks},
     * {@code compaction-threshold} and {@code compaction-max-bytes} (the constructors above use the
     * standalone defaults).
     */
    public WorkerConnector(Settings settings, LoadProbe probe, LazyDedupWorker dedup, WorkerRangeData rangeData,
                           WorkerGcMetadata gcMetadata, WorkerRangeSweep.Settings sweep) {
        this.settings = settings;
        this.probe = probe;
        this.dedup = dedup;
        this.rangeData = rangeData;
        this.gcMetadata = gcMetadata;
        this.rangeSweep = rangeData != null && gcMetadata != null
                ? new WorkerRangeSweep(rangeData, gcMetadata, dedup, sweep) : null;
        if (rangeData != null && gcMetadata != null) {
            // GC metadata created afresh over a range store that holds blocks has lost its counts: its sweeps are refused
            gcMetadata.checkHistoryAgainst(r -> rangeData.claim(r).nextPbn() - r.first());
        }
        this.backoffMillis = settings.minBackoff().toMillis();
        if (settings.trust() == null) {
            tls = null;
            engine = null;
        } else {
            engine = TlsEngines.choose(settings.tlsEngine());
            try {
                tls = TlsEngines.configure(SslContextBuilder.forClient(), engine).trustManager(settings.trust()).build();
            } catch (SSLException e) {
                throw new IllegalStateException("cannot set up TLS to the master with the " + TlsEngines.describe(engine) + ": "
                        + e.getMessage() + "; set holdfast.tls.engine=jdk", e);
            }
        }
    }

    /** Starts connecting; returns at once. */
    public void start() {
        loop.execute(this::connect);
    }

    /** This worker's membership as last heard. */
    public WorkerStatus status() {
        return status;
    }

    private String master() {
        return settings.masterHost() + ":" + settings.masterPort();
    }

    private void connect() {
        if (closed) {
            return;
        }
        String token;
        try {
            token = Files.readString(settings.tokenFile(), StandardCharsets.UTF_8).trim();
        } catch (IOException | RuntimeException e) {
            retry("cannot read the worker token file " + settings.tokenFile() + " (" + e + "); put a worker token (an admin creates"
                    + " one with role worker) in the file holdfast.cluster.token-file names");
            return;
        }
        if (settings.trust() != null) {
            settings.trust().clearRefusal();
        }
        Bootstrap b = new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, Math.toIntExact(settings.connectTimeout().toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                // a 16 MiB DATA_READ_ANSWER in the buffer leaves the link writable (one goes out while the
                // next is read from disk); past two, the master is not keeping up and reads pause
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(WRITE_LOW_WATER, WRITE_HIGH_WATER))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (tls != null) {
                            SslHandler ssl = tls.newHandler(ch.alloc(), settings.masterHost(), settings.masterPort());
                            if (settings.trust().checksHostName()) {
                                SSLEngine e = ssl.engine();
                                SSLParameters p = e.getSSLParameters();
                                p.setEndpointIdentificationAlgorithm("HTTPS");
                                e.setSSLParameters(p);
                            }
                            ssl.setHandshakeTimeoutMillis(settings.connectTimeout().toMillis());
                            ch.pipeline().addLast("tls", TlsEngines.tune(ssl, engine));
                        }
                        ch.pipeline().addLast("idle", new IdleStateHandler(settings.connectTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS))
                                .addLast("decoder", new FrameDecoder())
                                .addLast("encoder", ENCODER)
                                .addLast("link", new Link(token));
                    }
                });
        java.net.InetSocketAddress remote = new java.net.InetSocketAddress(settings.masterHost(), settings.masterPort());
        ChannelFuture f = settings.bindsLocally() ? b.connect(remote, new java.net.InetSocketAddress(settings.localHost(), 0)) : b.connect(remote);
        channel = f.channel();
        f.addListener(done -> {
            if (!done.isSuccess()) {
                retry("the master at " + master() + " is unreachable (" + done.cause().getMessage() + "); check holdfast.cluster.master"
                        + " and that the master runs with holdfast.cluster.role=master");
            }
        });
    }

    /** Logs why this attempt ended and schedules the next one. Event loop only. */
    private void retry(String why) {
        if (closed) {
            return;
        }
        status = new WorkerStatus(false, status.assignment(), why);
        long wait = backoffMillis;
        backoffMillis = Math.min(settings.maxBackoff().toMillis(), backoffMillis * 2);
        LOG.log(System.Logger.Level.WARNING, "{0}; next attempt in {1} ms", why, wait);
        loop.schedule(this::connect, wait, TimeUnit.MILLISECONDS);
    }

    /**
     * Closes the connection (the master marks this worker lost) and stops reconnecting; a range sweep
     * still running ends before its next batch is freed (waited for up to 30 s), so the caller may then
     * close the range data and GC metadata. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        Channel c = channel;
        if (c != null) {
            c.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        if (rangeSweep != null && !rangeSweep.stop(java.time.Duration.ofSeconds(30))) {
            LOG.log(System.Logger.Level.WARNING, "a range sweep still runs 30 s after the worker began stopping (in its compaction, say);"
                    + " its range data and GC metadata close under it: what it freed is freed, the next sweep goes on");
        }
    }

    /** This worker's range sweep (its progress and last result), or null without range data and GC metadata. */
    public WorkerRangeSweep rangeSweep() {
        return rangeSweep;
    }

    /** The current link's data service, or null (for tests: its queued bytes). */
    RangeDataService rangeDataService() {
        Channel c = channel;
        return c == null ? null : c.pipeline().get(RangeDataService.class);
    }

    /** Tells {@code lease} of every message the master acknowledges (REGISTER, heartbeats), by the time it was sent. */
    public void reportHearing(MasterLease lease) {
        this.lease = lease;
    }

    /** An older master's refusal of the fields a newer REGISTER ends with. */
    private static final java.util.regex.Pattern TRAILING_REGISTER = java.util.regex.Pattern.compile("REGISTER has \\d+ trailing bytes");

    /** One connection's protocol: REGISTER, REGISTERED, heartbeats. */
    private final class Link extends ChannelInboundHandlerAdapter {
        private final String token;
        private final int offered = offer;
        private ScheduledFuture<?> heartbeats;
        private long silentNanos; // how long the master may be silent once registered
        private long sequence;
        private String failure;
        // {sequence, System.nanoTime at sending} of heartbeats not yet acknowledged, oldest first; REGISTER's time
        private final java.util.ArrayDeque<long[]> unacked = new java.util.ArrayDeque<>();
        private long registerSent;
        // from version 7: a takeover of the range asks the master for its records of the worker's sealed logs
        private TakeoverRecordsCall takeoverRecords;

        Link(String token) {
            this.token = token;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            WorkerCapacity c = probe.capacity();
            // under TLS this is written once the handshake is done
            // from version 5 the epoch its range data archives at: a master that heard a later one refuses a stale node
            long archiveEpoch = offered < Register.ARCHIVE_EPOCH_VERSION ? Register.NO_ARCHIVE_EPOCH
                    : rangeData == null ? 0 : rangeData.archiveEpoch();
            // from version 7 what its GC counts are: the master lifts a restore's counts fence with it, or fences stale counts
            Register.Counts counts = offered < Register.COUNTS_MARK_VERSION ? null
                    : gcMetadata == null ? Register.Counts.NONE : WorkerCountsReport.of(gcMetadata.dir());
            // from version 7 the node generation its range data holds: the master refuses an older copy of the directory
            long generation;
            try {
                generation = offered < Register.NODE_GENERATION_VERSION ? Register.NO_GENERATION
                        : rangeData == null ? 0 : NodeGenerationFile.read(rangeData.dir());
            } catch (IllegalStateException e) {
                failure = e.getMessage(); // presenting none would pass for a fresh node: nothing is registered
                ctx.close();
                return;
            }
            registerSent = System.nanoTime(); // under TLS written later: an earlier time only shortens the lease
            ctx.writeAndFlush(new Register(offered, settings.nodeName(), token, settings.softwareVersion(),
                    Math.min(c.cpus(), 0xffff), c.heapMaxBytes(), c.diskBytes(), archiveEpoch, counts, generation));
            super.channelActive(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Registered r && heartbeats == null) {
                    registered(ctx, r);
                } else if (msg instanceof HeartbeatAck a) {
                    acknowledged(a.sequence()); // the idle handler saw the read too
                } else if (dedup != null && heartbeats != null && isDedupRequest(msg)) {
                    ctx.fireChannelRead(msg); // to the DedupService behind this handler
                } else if (rangeData != null && heartbeats != null && (RangeDataService.isRequest(msg)
                        || offered >= Register.SYNC_REPORT_VERSION && msg instanceof SealedLogsRecorded)) {
                    ctx.fireChannelRead(msg); // to the RangeDataService behind this handler
                } else if (gcMetadata != null && heartbeats != null && GcGuardService.isRequest(msg)) {
                    ctx.fireChannelRead(msg); // to the GcGuardService behind this handler
                } else if (gcMetadata != null && heartbeats != null && msg instanceof GcDelta) {
                    ctx.fireChannelRead(msg); // to the GcDeltaService behind this handler
                } else if (rangeSweep != null && heartbeats != null && msg instanceof GcSweep) {
                    ctx.fireChannelRead(msg); // to the GcSweepService behind this handler
                } else if (gcMetadata != null && heartbeats != null && offered >= Register.COUNTS_CHECK_VERSION
                        && msg instanceof CountsCheck) {
                    ctx.fireChannelRead(msg); // to the CountsCheckService behind this handler
                } else if (rangeSweep != null && heartbeats != null && offered >= Register.STALE_MARKS_VERSION
                        && msg instanceof StaleMarksTaken) {
                    ctx.fireChannelRead(msg); // to the StaleMarkSender behind this handler
                } else if (msg instanceof TakeoverRecordsPart p && takeoverRecords != null) {
                    takeoverRecords.answer(p);
                } else if (msg instanceof ErrorMessage e && heartbeats == null && (e.code() == ErrorCode.UNSUPPORTED_VERSION
                        && offered > Register.MIN_CLUSTER_VERSION || olderMasterRefusedArchiveEpoch(e))) {
                    offer = offered - 1; // a master of an older release: offer the next older version until it accepts one
                    failure = "the master at " + master() + " speaks an older cluster protocol (" + e.message() + "); registering"
                            + " again with version " + offer + (offer < Register.START_OVER_REPORT_VERSION
                            ? " (it is not told when this worker starts its index over: this log says so)"
                            : offer < Register.RANGE_DATA_REPORT_VERSION ? " (it is not told whether this worker's range data serves)"
                            : offer < Register.GC_FRAMES_VERSION ? " (it sends no GC frames: this worker's range is neither protected nor"
                            + " swept by it)"
                            : offer < Register.ARCHIVE_EPOCH_VERSION ? " (it does not refuse a node whose range was taken over, nor"
                            + " tell a new one which PBNs to skip)"
                            : offer < Register.REPAIR_VERSION
                            ? " (it does not repair a bad block of this worker's range in place: a backup stores a new copy)"
                            : offer < Register.COUNTS_MARK_VERSION
                            ? " (it does not lift a catalog restore's counts fence of this worker by itself: after worker-gc-import"
                            + " run gc-rebuild --worker N --counts-imported FILE on the stopped master; nor does it keep a record of"
                            + " the logs this worker seals, against which a copy of its range from the bucket is checked)"
                            : " (it records the logs this worker seals only at its syncs: a log uploaded after the last one has no"
                            + " record if this worker is lost, and a copy of its range from the bucket does not read it; nor does it"
                            + " forward the blocks this worker's sweeps free to the other workers' engines: their marks wait in"
                            + " range-data/gc/stale-marks until the master is upgraded)");
                    ctx.close();
                } else if (msg instanceof ErrorMessage e) {
                    failure = refusal(e);
                    ctx.close();
                } else {
                    failure = "the master sent " + msg + " unexpectedly; closing";
                    ctx.close();
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        /**
         * A master before version 5 parses REGISTER before it looks at the version, and refuses the
         * archive epoch at its end as trailing bytes (BAD_FRAME) rather than UNSUPPORTED_VERSION; one
         * before version 7 so refuses the counts mark and the node generation ("REGISTER has 32 trailing bytes", 40 for one before 5).
         */
        private boolean olderMasterRefusedArchiveEpoch(ErrorMessage e) {
            return offered >= Register.ARCHIVE_EPOCH_VERSION && e.code() == ErrorCode.BAD_FRAME
                    && TRAILING_REGISTER.matcher(e.message()).find();
        }

        private boolean isDedupRequest(Object msg) {
            return msg instanceof DedupLookup || msg instanceof DedupProbe || msg instanceof DedupRecord || msg instanceof DedupForget || msg instanceof DedupControl;
        }

        private void registered(ChannelHandlerContext ctx, Registered r) {
            if (rangeData != null && r.generation() != Register.NO_GENERATION) {
                try {
                    // before anything serves, and so before the first heartbeat, which tells the master it is stored
                    NodeGenerationFile.write(rangeData.dir(), r.generation());
                } catch (RuntimeException e) {
                    failure = e.getMessage() + "; this registration is not served (the master would not refuse an older copy of"
                            + " this range data), registering again";
                    ctx.close();
                    return;
                }
            }
            MasterLease heardBy = lease;
            if (heardBy != null) {
                // the master's lost-after first, so the lease never runs on a longer one than the master waits
                heardBy.masterLostAfter(r.lostAfterMillis() == Registered.NO_LOST_AFTER ? null : Duration.ofMillis(r.lostAfterMillis()));
                heardBy.registered(r.workerId(), registerSent); // before the store opens: its start resumes interrupted deletes
            }
            WorkerRecord w = new WorkerRecord(r.workerId(), settings.nodeName(), r.epoch(), new PbnRange(r.pbnFirst(), r.pbnLimit()),
                    0, System.currentTimeMillis());
            if (dedup != null) {
                // before the first call of this registration: an index of another membership or worker id must not answer
                StartOverReason why = dedup.claim(r.workerId(), r.epoch());
                if (why != null) {
                    LOG.log(System.Logger.Level.WARNING, "started the dedup index over for worker {0} at epoch {1}: {2}. Duplicates of"
                            + " blocks only this worker''s index held are missed (never invented) until its index is rebuilt: an admin"
                            + " runs POST /api/v1/cluster/workers/{0}/rebuild on the master once every worker is up",
                            Long.toString(r.workerId()), Long.toString(r.epoch()), why.words());
                    unreported.set(new DedupService.StartOver(System.currentTimeMillis(), why));
                }
                ctx.pipeline().addAfter(ctx.name(), "dedup", new DedupService(dedup, offered >= Register.START_OVER_REPORT_VERSION ? unreported : null,
                        OtherRangePbns.of(r)));
            }
            AnsweredStores.Link answered = null; // the stores answered over this link, with range data and GC metadata
            if (rangeData != null) {
                // an archiving range store keys its objects by the id; no PBN below the floor is handed out
                rangeData.identify(r.workerId(), r.pbnFloor());
                // before the store opens: a takeover checks each log it adopts against the master's records (version 7)
                if (offered >= Register.TAKEOVER_RECORDS_VERSION && rangeData.archived()) {
                    takeoverRecords = new TakeoverRecordsCall(ctx.channel(), Duration.ofMillis((long) r.heartbeatMillis() * SILENT_INTERVALS));
                    rangeData.checkTakeoversAgainst(takeoverRecords::fetch);
                } else {
                    rangeData.checkTakeoversAgainst(id -> SealedLogs.NONE);
                }
                // the GC metadata opens before any block is stored here, so its counts-lost check sees only earlier blocks
                Runnable first = gcMetadata == null ? () -> { } : () -> gcMetadata.claim(w.range());
                // each stored block's own grace expiry, capped while the master may still protect it; closed when the link ends
                answered = gcMetadata == null ? null : gcMetadata.answered().open();
                StoredBlockExpiry expiry = answered == null ? StoredBlockExpiry.NONE : new StoredBlockExpiry(gcMetadata, answered);
                // from version 7 an archiving worker tells the master what it sealed, so a copy of its range can be checked
                SealedLogReporter sealed = offered >= Register.LOG_DIGEST_VERSION && rangeData.archived()
                        ? new SealedLogReporter(r.workerId()) : null;
                // from version 8 also between syncs, soon after an upload is confirmed (looked at every heartbeat)
                ctx.pipeline().addAfter(ctx.name(), "data", new RangeDataService(rangeData, w.range(), first, sealed,
                        offered >= Register.SYNC_REPORT_VERSION, expiry));
            }
            if (gcMetadata != null) {
                // an archiving range store fences the GC services: a node whose range was taken over must protect
                // nothing the owner's sweep would not see, and acknowledge no delta the owner never logs
                WorkerRangeData fence = rangeData != null && rangeData.archived() ? rangeData : null;
                // the grace protection of the master's backups, on its own thread beside the deltas'
                ctx.pipeline().addAfter(ctx.name(), "gc-guard", new GcGuardService(gcMetadata, w.range(), fence, answered));
                ctx.pipeline().addAfter(ctx.name(), "gc", new GcDeltaService(gcMetadata, w.range(), fence));
            }
            if (rangeSweep != null) {
                ctx.pipeline().addAfter(ctx.name(), "sweep", new GcSweepService(rangeSweep, w.range()));
            }
            if (rangeSweep != null && offered >= Register.STALE_MARKS_VERSION) {
                // a master of version 8 forwards what this worker's sweeps freed to the other workers' engines
                ctx.pipeline().addAfter(ctx.name(), "stale-marks", new StaleMarkSender(rangeSweep.staleMarks(),
                        Duration.ofMillis(4L * r.heartbeatMillis())));
            }
            if (gcMetadata != null && offered >= Register.COUNTS_CHECK_VERSION) {
                // a master of version 7 sends COUNTS_CHECK only on a link that registered at it
                ctx.pipeline().addAfter(ctx.name(), "counts-check", new CountsCheckService(gcMetadata, rangeData, w.range()));
            }
            status = new WorkerStatus(true, w, null);
            backoffMillis = settings.minBackoff().toMillis();
            LOG.log(System.Logger.Level.INFO, "registered with the master at {0} as worker {1}, epoch {2}, PBNs [{3}, {4})", master(),
                    r.workerId(), r.epoch(), Long.toString(r.pbnFirst()), Long.toString(r.pbnLimit()));
            silentNanos = TimeUnit.MILLISECONDS.toNanos((long) r.heartbeatMillis() * SILENT_INTERVALS);
            ctx.pipeline().replace("idle", "idle", new IdleStateHandler(silentNanos, 0, 0, TimeUnit.NANOSECONDS));
            heartbeats = ctx.executor().scheduleAtFixedRate(() -> {
                WorkerLoad l = probe.load();
                // a master before version 3 would refuse the longer heartbeat: it hears nothing of the range data
                Heartbeat.RangeData report = rangeData != null && offered >= Register.RANGE_DATA_REPORT_VERSION ? rangeData.report() : null;
                if (report != null && offered >= Register.ARCHIVE_EPOCH_VERSION) {
                    report = report.withArchiveEpoch(rangeData.knownArchiveEpoch()); // a node that took the range over says so
                }
                if (lease != null && unacked.size() < 1024) { // an unanswered run longer than that holds no lease anyway
                    unacked.addLast(new long[] {sequence, System.nanoTime()});
                }
                ctx.writeAndFlush(new Heartbeat(sequence++, l.loadMilli() < 0 ? Heartbeat.UNKNOWN_LOAD : Math.min(l.loadMilli(), 0xfffffffeL),
                        l.heapUsedBytes(), l.heapMaxBytes(), l.diskFreeBytes(), report));
                RangeDataService served = ctx.pipeline().get(RangeDataService.class);
                if (served != null) {
                    served.heartbeat(); // a sealed-log report between syncs, if one is due (version 8)
                }
            }, 0, r.heartbeatMillis(), TimeUnit.MILLISECONDS);
        }

        /** The master acknowledged heartbeat {@code seq}: the lease runs from its sending. */
        private void acknowledged(long seq) {
            while (!unacked.isEmpty() && unacked.peekFirst()[0] < seq) {
                unacked.removeFirst();
            }
            MasterLease l = lease;
            if (!unacked.isEmpty() && unacked.peekFirst()[0] == seq) {
                long sent = unacked.removeFirst()[1];
                if (l != null) {
                    l.heard(sent);
                }
            }
        }

        private String refusal(ErrorMessage e) {
            // the master's text may start with the code already (a ProtocolException's message): say it once
            String prefix = e.code() + ": ";
            String message = e.message().startsWith(prefix) ? e.message().substring(prefix.length()) : e.message();
            String what = "the master at " + master() + " refused this worker (" + e.code() + "): " + message;
            return e.code() == ErrorCode.UNAUTHORIZED ? what + "; put a valid token of role worker into " + settings.tokenFile()
                    + " (if another host replaced this worker, stop this one instead)" : what;
        }

        /** Stops reading requests while the master does not take the answers (backpressure): they would pile up here. */
        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
            if (ctx.channel().isWritable()) {
                LinkBackpressure.of(ctx.channel()).release(LinkBackpressure.UNWRITABLE);
            } else {
                LinkBackpressure.of(ctx.channel()).hold(LinkBackpressure.UNWRITABLE);
            }
            super.channelWritabilityChanged(ctx);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            // reads paused by backpressure: the master's heartbeat answers may wait unread in the socket, so
            // this is the worker not listening, not the master silent; checked again one period later. (A
            // master host that is gone still ends the link: TCP gives up on the unsent answers)
            if (evt instanceof IdleStateEvent && heartbeats != null && LinkBackpressure.of(ctx.channel()).explainsSilence(silentNanos)) {
                return;
            }
            if (evt instanceof IdleStateEvent) {
                failure = "the master at " + master() + " went silent (no answer " + (heartbeats == null ? "to REGISTER" : "to heartbeats")
                        + "); reconnecting";
                ctx.close();
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            String refusal = settings.trust() == null ? null : settings.trust().refusal();
            if (failure == null) {
                failure = refusal != null ? refusal
                        : cause instanceof ProtocolException p ? "the master at " + master() + " sent a bad frame: " + p.getMessage()
                        : "the connection to the master at " + master() + " failed: " + cause;
            }
            if (cause instanceof ProtocolException p && refusal == null) {
                // tell the master why (a bad dedup request, a REGISTERED it cannot mean), lingering so
                // that a master still writing the refused frame reads the ERROR rather than a reset
                if (heartbeats != null) {
                    heartbeats.cancel(false);
                }
                ErrorLinger.sendAndClose(ctx.channel(), ErrorMessage.of(p), settings.connectTimeout().toMillis());
                return;
            }
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (heartbeats != null) {
                heartbeats.cancel(false);
                // a master that goes away may come back upgraded (workers upgraded first): kept lower,
                // this worker would report no range data to it until its own restart
                offer = Register.CLUSTER_VERSION;
                if (rangeData != null) {
                    rangeData.unlinked(); // the master may let the old node back once it stops hearing this one
                }
            }
            retry(failure != null ? failure : "the master at " + master() + " closed the connection");
            super.channelInactive(ctx);
        }
    }
}
