package org.holdfast.server.ingest;

import static org.holdfast.server.ingest.ErrorMapping.codeOf;
import static org.holdfast.server.ingest.ErrorMapping.messageOf;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Abort;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.FrameBudget;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.RunRecorded;
import org.holdfast.common.protocol.RunReport;
import org.holdfast.server.restore.SnapshotLister;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.store.CorruptDataException;

/**
 * One agent connection: the protocol state machine (HELLO first; then backups, listings and
 * restores, one at a time) and the hand-off of every frame to the connection's serial lane, where
 * it goes to the part that does the work: {@link AgentAccess} (token, role and scope),
 * {@link ConnectionBackup}, {@link ConnectionRestore}; {@link ErrorMapping}, {@link ConnectionEnd},
 * {@link LaneBacklog} and {@link FrameRateWatch} hold the rules of refusals and flow control.
 *
 * <h2>Authentication and authorization</h2>
 * The token in HELLO is checked before anything else is read: the decoder holds every byte behind
 * the HELLO unparsed and reading from the socket pauses until the token is accepted. A refused
 * token gets {@code UNAUTHORIZED}, an audit entry, and the connection closes. BACKUP_BEGIN,
 * LIST_SNAPSHOTS, RESTORE and RUN_REPORT are then checked by {@link AgentAccess#authorize} before
 * the catalog is consulted.
 *
 * <p>Any error ends the connection: the agent gets an {@code ERROR} with the code and a message,
 * the connection closes (after discarding what the agent still sends for up to
 * {@link ErrorLinger#ERROR_LINGER_MILLIS}, so the ERROR is not lost to a reset), and a running backup is
 * abandoned (no snapshot). Fields marked "lane" are touched only on the serial lane.
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(ConnectionHandler.class.getName());
    /** Time a new connection has to send HELLO (after the TLS handshake, which has its own timeout). */
    static final java.time.Duration HELLO_DEADLINE = java.time.Duration.ofSeconds(15);

    private final IngestServer server;
    private final FrameDecoder decoder;
    private final SerialExecutor lane;
    private final AgentAccess access;
    private final ConnectionBackup backup;
    private final ConnectionRestore restore;
    private final LaneBacklog backlog;
    private final ConnectionEnd end;
    private volatile Channel channel;
    // event loop: the minimum-rate watch of the frame being received
    private java.util.concurrent.ScheduledFuture<?> rateCheck;
    private FrameRateWatch frameRate;
    // an overdue frame was dropped while its connection's ERROR waited for the lane: closed once that ERROR was handed over
    private boolean overdueDropped;
    // event loop: the block size BLOCKS payloads are digested for (0 outside a backup)
    private int digestBlockSize;
    // event loop: a HELLO was received and its token is being checked (reading is paused)
    private boolean helloSeen;
    private boolean awaitingHello;
    private boolean greetedOnLoop;
    /** Event loop: a refusal waits on the lane for the session's cleanup before its ERROR goes out. */
    private boolean refused;
    // lane
    private boolean greeted;
    // lane: the protocol version agreed in HELLO_OK
    private int protocolVersion;
    // lane: HELLO's agent name, for the running backups and run reports
    private String agentName = "";

    ConnectionHandler(IngestServer server, FrameDecoder decoder) {
        this.server = server;
        this.decoder = decoder;
        this.lane = new SerialExecutor(server.sessionPool());
        this.backlog = new LaneBacklog(server.settings().maxQueuedFrames(), server.settings().maxQueuedBytes());
        this.end = new ConnectionEnd(server.settings().idleTimeout().toMillis());
        IngestServices services = server.services();
        this.access = new AgentAccess(services.authenticator(), services.audit(), services.clock(), server.stats().refused,
                this::remoteAddress);
        this.backup = new ConnectionBackup(server, access, this::remoteAddress, () -> channel.eventLoop().execute(() -> {
            decoder.blockSize(0);
            digestBlockSize = 0;
        }));
        this.restore = new ConnectionRestore(server, access, lane, this::fail);
        decoder.budget(new FrameBudget() {
            @Override
            public boolean tryReserve(int frameBytes) {
                if (server.inflight().tryReserve(frameBytes, ConnectionHandler.this::budgetFreed)) {
                    return true;
                }
                channel.config().setAutoRead(false); // read nothing more until budgetFreed
                return false;
            }

            @Override
            public void release(int frameBytes) {
                server.inflight().release(frameBytes);
            }
        });
    }

    /** The server's in-flight budget has room again: try the waiting frame once more. Any thread. */
    private void budgetFreed() {
        Channel ch = channel;
        if (ch == null || !ch.isActive() || ch.eventLoop().isShuttingDown()) {
            return;
        }
        ch.eventLoop().execute(() -> {
            ChannelHandlerContext ctx = ch.pipeline().context(decoder);
            if (ctx != null && ch.isActive()) {
                decoder.retry(ctx);
                updateAutoRead();
            }
        });
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        decoder.holdAfterHello();
        super.handlerAdded(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        channel = ctx.channel();
        // an unauthenticated connection gets a short deadline, not the idle timeout: a client that
        // trickles bytes without ever completing a HELLO must not hold a socket for minutes
        java.time.Duration deadline = helloDeadline(server.settings().idleTimeout());
        ctx.executor().schedule(() -> {
            if (!helloSeen && channel.isActive()) {
                LOG.log(Level.INFO, "connection " + channel.remoteAddress() + " sent no HELLO within " + deadline + "; closing it");
                end.closeWithError(channel, ErrorCode.BAD_STATE, "no HELLO within " + deadline.toSeconds() + " s; closed by the server");
            }
        }, deadline.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        long tick = FrameRateWatch.tickMillis(server.settings().limits());
        frameRate = new FrameRateWatch(server.settings().limits(), System.nanoTime());
        rateCheck = ctx.executor().scheduleAtFixedRate(this::checkFrameRate, tick, tick, java.util.concurrent.TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    /** Closes the connection when the frame being received is overdue ({@link FrameRateWatch}). Event loop, every tick. */
    private void checkFrameRate() {
        if (overdueDropped) {
            end.closeBehindError(channel); // as below, once the lane handed its ERROR over
            return;
        }
        int partial = decoder.partialFrameBytes();
        if (!frameRate.overdue(System.nanoTime(), partial, decoder.framesDecoded(), channel.config().isAutoRead())) {
            return;
        }
        if (end.closing() || refused) {
            // an ERROR went out (its write may be stuck behind output the agent does not read) or waits for the
            // lane (behind a commit, a slow disk): the frame would be discarded anyway, and its reservation is not
            // held past its deadline. The close goes behind the ERROR's write; until that write is handed over,
            // the frame is dropped now and a later tick closes (closeAtTheLatest bounds the wait): closing here
            // lost the reason whenever the lane took longer than a tick
            if (!end.closeBehindError(channel)) {
                decoder.discardInput();
                overdueDropped = true;
            }
            return;
        }
        IngestLimits limits = server.settings().limits();
        java.time.Duration allowed = limits.frameDeadline(partial);
        String why = "a frame of " + partial + " bytes was still incomplete after " + allowed.toSeconds() + " s: it arrives slower"
                + " than the minimum of " + limits.minFrameRate() + " bytes/s (holdfast.ingest.min-frame-rate); check the network";
        server.limited("connection " + remoteAddress() + ": " + why + "; closing it");
        refuseAfterCleanup(ErrorCode.LIMIT_EXCEEDED, why, false);
    }

    /** How long a new connection has to send its HELLO: {@link #HELLO_DEADLINE}, or the idle timeout if shorter. */
    static java.time.Duration helloDeadline(java.time.Duration idleTimeout) {
        return idleTimeout.compareTo(HELLO_DEADLINE) < 0 ? idleTimeout : HELLO_DEADLINE;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        // the frame's reservation of the in-flight budget is ours now; given back once the lane is done with it
        int frameBytes = msg instanceof Message ? decoder.lastFrameBytes() : 0;
        if (end.closing() || !(msg instanceof Message m)) {
            ReferenceCountUtil.release(msg);
            server.inflight().release(frameBytes);
            return;
        }
        long bytes = frameBytes;
        if (m instanceof Hello && !helloSeen) {
            helloSeen = true;
            awaitingHello = true; // nothing more is read until the token is checked
        }
        backlog.queued(bytes);
        updateAutoRead();
        CompletableFuture<PayloadDigester.FrameDigests> digests = startDigests(m);
        lane.execute(() -> {
            try {
                if (!end.closing()) {
                    if (digests != null) {
                        backup.blocks((Blocks) m, digests);
                    } else {
                        handle(m);
                    }
                }
            } catch (Throwable t) {
                fail(t);
            } finally {
                if (backlog.flushNeedsNow()) {
                    channel.flush();
                }
                if (digests != null) {
                    digests.exceptionally(t -> null).join(); // the digest threads read the frame: keep it until they are done
                }
                ReferenceCountUtil.release(m);
                backlog.done(bytes);
                server.inflight().release(bytes);
                if (!channel.eventLoop().isShuttingDown()) {
                    channel.eventLoop().execute(this::updateAutoRead);
                }
            }
        });
    }

    /**
     * Starts decoding and hashing a BLOCKS frame's payloads on the digest pool, so the lane only
     * compares and stores. Null (the lane does it all) outside a backup or when the pool is gone.
     * Event loop only.
     */
    private CompletableFuture<PayloadDigester.FrameDigests> startDigests(Message m) {
        if (!(m instanceof Blocks b) || digestBlockSize == 0) {
            return null;
        }
        try {
            return server.digester().digest(b, digestBlockSize);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Pauses reading while too much of this connection's input waits for the lane. Event loop only. */
    private void updateAutoRead() {
        boolean room = end.closing() || !awaitingHello && !decoder.isWaitingForBudget() && backlog.hasRoom();
        if (channel.config().isAutoRead() != room) {
            channel.config().setAutoRead(room);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            ctx.close(); // the peer went away; nobody to tell
        } else if (ErrorMapping.isTlsFailure(cause)) {
            // a plain-TCP client on the TLS port, or a failed handshake: no frame can reach it, so close
            String root = ErrorMapping.rootMessage(cause);
            LOG.log(Level.INFO, "TLS failed with " + channel.remoteAddress() + ": " + root + "; connection closed"
                    + ErrorMapping.tlsHint(root));
            ctx.close();
        } else {
            if (codeOf(cause) == ErrorCode.LIMIT_EXCEEDED && !greetedOnLoop) {
                server.limited("connection " + remoteAddress() + " before its HELLO was accepted: " + messageOf(cause) + "; closing it");
            }
            // a refused frame: the agent may still be writing it, so linger (see ErrorLinger)
            refuseAfterCleanup(codeOf(cause), messageOf(cause), true);
            return;
        }
        lane.execute(this::cleanup);
    }

    /**
     * Ends the connection with an ERROR sent only once its session is cleaned up on the lane (the
     * volume's lock released), as {@link #fail} does: an agent that retries as soon as it reads the
     * ERROR must not meet its own dead session (VOLUME_BUSY). The frames already queued on the lane
     * run first, so their answers precede the ERROR. {@code linger}: a refused frame, input is
     * discarded from now on (see ErrorLinger); otherwise a timer's refusal, closed once written.
     * Either way the connection closes at the latest after the idle timeout: a lane stuck behind a
     * restore to a peer that reads nothing must not hold it for ever. Event loop.
     */
    private void refuseAfterCleanup(ErrorCode code, String message, boolean linger) {
        refused = true;
        if (linger) {
            decoder.discardInput(); // nothing more is decoded or queued; a partial frame's reservation goes now
        }
        end.closeAtTheLatest(channel);
        lane.execute(() -> {
            try {
                cleanup(code + ": " + message);
            } finally {
                if (linger) {
                    end.lingerWithError(channel, code, message);
                } else {
                    end.closeWithError(channel, code, message);
                }
            }
        });
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (lane.busyWithin(server.settings().idleTimeout().toNanos()) && channel.isWritable()) {
                // the server is working on the agent's request (a restore reading a lost worker's blocks, a commit),
                // or finished it within the period and its reply may not be written yet: idle means the agent sends
                // nothing while the server waits for it; asked again after the next period
                LOG.log(Level.DEBUG, "connection " + channel.remoteAddress() + " quiet for " + server.settings().idleTimeout()
                        + " while the server works on its request; kept open");
                return;
            }
            LOG.log(Level.INFO, "connection " + channel.remoteAddress() + " idle for " + server.settings().idleTimeout() + "; closing it");
            refuseAfterCleanup(ErrorCode.BAD_STATE, "connection idle for " + server.settings().idleTimeout() + "; closed by the server", false);
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        end.closed();
        if (rateCheck != null) {
            rateCheck.cancel(false);
        }
        lane.execute(this::cleanup);
        super.channelInactive(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable()) {
            lane.execute(() -> {
                if (!end.closing()) {
                    try {
                        restore.pump();
                    } catch (Throwable t) {
                        fail(t);
                    }
                }
            });
        }
        super.channelWritabilityChanged(ctx);
    }

    // ---- lane ---------------------------------------------------------------------------------

    private void handle(Message m) {
        if (m instanceof Hello h) {
            greet(h);
            return;
        }
        if (!greeted) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "the first message must be HELLO, got " + m.type());
        }
        if (m instanceof BackupBegin b) {
            BackupReady ready = backup.begin(b, authorized(b, b.volume(), IngestAction.BACKUP), agentName, protocolVersion);
            int sessionBlockSize = ready.blockSize();
            // The decoder must know the block size before any BLOCKS can arrive, i.e. before the agent reads BACKUP_READY.
            channel.eventLoop().execute(() -> {
                decoder.blockSize(sessionBlockSize);
                digestBlockSize = sessionBlockSize;
                channel.writeAndFlush(ready);
            });
        } else if (m instanceof Entries e) {
            channel.write(backup.entries(e));
            backlog.needWritten();
        } else if (m instanceof Blocks b) {
            backup.blocks(b);
        } else if (m instanceof Commit c) {
            channel.writeAndFlush(backup.commit(c, protocolVersion));
        } else if (m instanceof Abort) {
            backup.abort();
        } else if (m instanceof ListSnapshots l) {
            VolumeId volume = authorized(m, l.volume(), IngestAction.LIST);
            channel.writeAndFlush(new SnapshotLister(server.services().catalog()).list(volume));
        } else if (m instanceof Restore r) {
            restore.start(r, authorized(r, r.volume(), IngestAction.RESTORE), channel, protocolVersion);
        } else if (m instanceof RunReport r) {
            recordRun(r);
        } else {
            throw new ProtocolException(ErrorCode.BAD_FRAME, m.type() + " is never sent to the server");
        }
    }

    /** HELLO: the protocol version agreed and the token accepted, then the decoder takes the frames behind it. */
    private void greet(Hello h) {
        if (greeted) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "HELLO may be sent only once per connection");
        }
        if (h.protocolVersion() < ProtocolLimits.MIN_PROTOCOL_VERSION) {
            throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, "this server speaks protocol versions "
                    + ProtocolLimits.MIN_PROTOCOL_VERSION + " to " + ProtocolLimits.PROTOCOL_VERSION + ", the agent offered "
                    + h.protocolVersion() + "; upgrade the agent");
        }
        AccessPrincipal principal = access.authenticate(h.token());
        agentName = h.agentName();
        // the lower of the two: a newer agent falls back to what this server speaks
        protocolVersion = Math.min(h.protocolVersion(), ProtocolLimits.PROTOCOL_VERSION);
        greeted = true;
        server.observe(o -> o.connected(principal, remoteAddress(), h.agentName()));
        int agreed = protocolVersion;
        channel.eventLoop().execute(() -> {
            decoder.protocolVersion(agreed); // before the held bytes are decoded: frames only from a version 4 agent
            awaitingHello = false;
            greetedOnLoop = true;
            decoder.resume(channel.pipeline().context(decoder));
            updateAutoRead();
            // HELLO_OK only once the decoder takes frames after HELLO: written before, the agent's next
            // frames could be read while the decoder still held (counted against the pre-HELLO budget)
            channel.writeAndFlush(new HelloOk(agreed, server.settings().serverVersion(), ProtocolLimits.MAX_FRAME));
        });
    }

    /**
     * The volume a request names, once the connection is idle, the name valid and the principal
     * allowed {@code action} on it (see {@link AgentAccess#authorize}).
     */
    private VolumeId authorized(Message m, String volumeName, IngestAction action) {
        requireIdle(m);
        VolumeId volume = volumeId(volumeName);
        access.authorize(action, volume);
        return volume;
    }

    /**
     * RUN_REPORT (protocol version 3): a volume inside the token's scope, for a role that may back it
     * up; it need not exist yet (a first run may fail before any snapshot). Stored, then RUN_RECORDED;
     * a refusal stores nothing.
     */
    private void recordRun(RunReport r) {
        requireIdle(r);
        if (protocolVersion < 3) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "RUN_REPORT needs protocol version 3; this connection's HELLO"
                    + " offered " + protocolVersion);
        }
        VolumeId volume = authorized(r, r.volume(), IngestAction.REPORT_RUN);
        if (r.endMillis() < r.startMillis()) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "RUN_REPORT for volume '" + volume + "' ends (" + r.endMillis()
                    + ") before it starts (" + r.startMillis() + "); nothing was recorded");
        }
        server.services().observer().runReported(access.principal(), agentName, r);
        channel.writeAndFlush(RunRecorded.INSTANCE);
    }

    private String remoteAddress() {
        return String.valueOf(channel.remoteAddress()).replaceFirst("^/", "");
    }

    private void requireIdle(Message m) {
        if (backup.running() || restore.running()) {
            throw new ProtocolException(ErrorCode.BAD_STATE, m.type() + " while a " + (backup.running() ? "backup" : "restore")
                    + " is running on this connection");
        }
    }

    private static VolumeId volumeId(String name) {
        if (!VolumeId.isValid(name)) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "invalid volume name '" + name + "': use 1 to "
                    + VolumeId.MAX_LENGTH + " letters, digits, '.', '_' or '-', not starting with '.'");
        }
        return new VolumeId(name);
    }

    private void fail(Throwable t) {
        ErrorCode code = codeOf(t);
        // a lost dedup or data worker: the backup or restore stops cleanly and can run again, not a server fault
        if (code == ErrorCode.WORKER_UNAVAILABLE) {
            LOG.log(Level.WARNING, "connection " + channel.remoteAddress() + ": " + ErrorMapping.stoppedRun(backup.running(), restore.running()) + ": "
                    + messageOf(t));
        } else if (code == ErrorCode.INTERNAL || t instanceof CorruptDataException) {
            LOG.log(Level.ERROR, "connection " + channel.remoteAddress() + ": " + t, t);
        } else {
            LOG.log(Level.INFO, "connection " + channel.remoteAddress() + ": " + code + ": " + messageOf(t));
        }
        server.stats().errors.incrementAndGet();
        try {
            // the session ends (and the volume's lock goes) before the ERROR is written: an agent that
            // retries as soon as it reads the ERROR must not meet its own dead session (VOLUME_BUSY).
            // Nothing else runs on the lane meanwhile, so no frame of this connection is handled in between.
            cleanup(code + ": " + messageOf(t));
        } finally {
            // the agent may have frames in flight (BLOCKS mid-backup, anything pipelined behind the
            // refused request): closing on them would reset the connection and lose the ERROR, so linger
            end.lingerWithError(channel, code, messageOf(t));
        }
    }

    private void cleanup() {
        cleanup("the connection closed before the commit");
    }

    /** Abandons a session in progress (recording {@code why} as the volume's last backup result) and a restore. */
    private void cleanup(String why) {
        backup.abandon(why);
        restore.close();
    }
}
