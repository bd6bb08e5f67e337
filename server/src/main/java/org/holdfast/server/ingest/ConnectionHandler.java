package org.holdfast.server.ingest;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.security.SecureRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.concurrent.Futures;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Abort;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameBudget;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.RunRecorded;
import org.holdfast.common.protocol.RunReport;
import org.holdfast.server.catalog.CommitRejectedException;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.restore.SnapshotLister;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuthenticationFailedException;
import org.holdfast.server.store.CorruptBlockException;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.StorageFullException;
import org.holdfast.server.store.StoreException;

/**
 * One agent connection: the protocol state machine (HELLO first; then backups, listings and
 * restores, one at a time) and the hand-off of every frame to the connection's serial lane.
 *
 * <h2>Authentication and authorization</h2>
 * The token in HELLO is checked by the {@link org.holdfast.server.security.TokenAuthenticator}
 * before anything else is read: the decoder holds every byte behind the HELLO unparsed and reading
 * from the socket pauses until the token is accepted. A refused token gets {@code UNAUTHORIZED},
 * an audit entry, and the connection closes. BACKUP_BEGIN, LIST_SNAPSHOTS and RESTORE are then
 * checked against the principal's role ({@link IngestAction}) and volume scope before the catalog
 * is consulted, so a refusal reads the same whether or not the volume exists. Each of those requests
 * asks the authenticator about the token again, so a token revoked or expired after HELLO starts
 * nothing more on a connection that stays open.
 *
 * <p>Any error ends the connection: the agent gets an {@code ERROR} with the code and a message,
 * the connection closes (after discarding what the agent still sends for up to
 * {@link #ERROR_LINGER_MILLIS}, so the ERROR is not lost to a reset), and a running backup is
 * abandoned (no snapshot). Fields marked "lane"
 * are touched only on the serial lane.
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(ConnectionHandler.class.getName());
    /** Block size of a new volume whose first BACKUP_BEGIN leaves it to the server (0). */
    static final int DEFAULT_BLOCK_SIZE = 4096;
    /** NEEDs written before the lane flushes even though more frames are waiting. */
    static final int FLUSH_NEEDS = 64;
    /** Time a new connection has to send HELLO (after the TLS handshake, which has its own timeout). */
    static final java.time.Duration HELLO_DEADLINE = java.time.Duration.ofSeconds(15);
    private static final SecureRandom SECRETS = new SecureRandom();

    private final IngestServer server;
    private final FrameDecoder decoder;
    private final SerialExecutor lane;
    private final AtomicInteger queuedFrames = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile Channel channel;
    // event loop: the minimum-rate watch of the frame being received
    private java.util.concurrent.ScheduledFuture<?> rateCheck;
    private long lastRateCheck;
    private long watchedFrame = -1;
    private long frameReadingNanos;
    // event loop: the block size BLOCKS payloads are digested for (0 outside a backup)
    private int digestBlockSize;
    // event loop: a HELLO was received and its token is being checked (reading is paused)
    private boolean helloSeen;
    private boolean awaitingHello;
    private boolean greetedOnLoop;
    /** Event loop: a refusal waits on the lane for the session's cleanup before its ERROR goes out. */
    private boolean refused;
    // lane
    private int unflushedNeeds;
    private boolean greeted;
    private AccessPrincipal principal;
    // lane: HELLO's token, checked again before every request
    private String token;
    // lane: the protocol version agreed in HELLO_OK
    private int protocolVersion;
    private BackupSession session;
    private RestoreStream restore;
    // lane: payload bytes received in the running backup
    private long sessionBytes;
    // lane: the running backup as the list of running backups shows it; HELLO's agent name for it
    private RunningBackups.Progress progress;
    private String agentName = "";

    ConnectionHandler(IngestServer server, FrameDecoder decoder) {
        this.server = server;
        this.decoder = decoder;
        this.lane = new SerialExecutor(server.sessionPool());
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
                sendErrorAndClose(ErrorCode.BAD_STATE, "no HELLO within " + deadline.toSeconds() + " s; closed by the server");
            }
        }, deadline.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        long tick = Math.max(10, Math.min(1000, server.settings().limits().frameGrace().toMillis() / 4));
        lastRateCheck = System.nanoTime();
        rateCheck = ctx.executor().scheduleAtFixedRate(this::checkFrameRate, tick, tick, java.util.concurrent.TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    /**
     * Closes the connection when the frame being received has taken longer than its size at the
     * minimum rate plus the grace ({@link IngestLimits#frameDeadline}), counting only the time the
     * server was reading: a sender that trickles a large frame cannot hold its reservation of the
     * in-flight budget for long. Event loop, every tick.
     */
    private void checkFrameRate() {
        long now = System.nanoTime();
        long elapsed = now - lastRateCheck;
        lastRateCheck = now;
        int partial = decoder.partialFrameBytes();
        if (partial == 0) {
            watchedFrame = -1;
            return;
        }
        long frame = decoder.framesDecoded();
        if (frame != watchedFrame) {
            watchedFrame = frame;
            frameReadingNanos = 0;
            return;
        }
        if (channel.config().isAutoRead()) {
            frameReadingNanos += elapsed;
        }
        IngestLimits limits = server.settings().limits();
        java.time.Duration allowed = limits.frameDeadline(partial);
        if (frameReadingNanos > allowed.toNanos()) {
            if (closing.get() || refused) {
                // an ERROR went out or waits for the lane (its write may be stuck behind output the agent
                // does not read): the frame would be discarded anyway, and its reservation is not held past its deadline
                channel.close();
                return;
            }
            String why = "a frame of " + partial + " bytes was still incomplete after " + allowed.toSeconds() + " s: it arrives slower"
                    + " than the minimum of " + limits.minFrameRate() + " bytes/s (holdfast.ingest.min-frame-rate); check the network";
            server.limited("connection " + remoteAddress() + ": " + why + "; closing it");
            refuseAfterCleanup(ErrorCode.LIMIT_EXCEEDED, why, false);
        }
    }

    /** How long a new connection has to send its HELLO: {@link #HELLO_DEADLINE}, or the idle timeout if shorter. */
    static java.time.Duration helloDeadline(java.time.Duration idleTimeout) {
        return idleTimeout.compareTo(HELLO_DEADLINE) < 0 ? idleTimeout : HELLO_DEADLINE;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        // the frame's reservation of the in-flight budget is ours now; given back once the lane is done with it
        int frameBytes = msg instanceof Message ? decoder.lastFrameBytes() : 0;
        if (closing.get() || !(msg instanceof Message m)) {
            ReferenceCountUtil.release(msg);
            server.inflight().release(frameBytes);
            return;
        }
        long bytes = frameBytes;
        if (m instanceof Hello && !helloSeen) {
            helloSeen = true;
            awaitingHello = true; // nothing more is read until the token is checked
        }
        queuedFrames.incrementAndGet();
        queuedBytes.addAndGet(bytes);
        updateAutoRead();
        CompletableFuture<PayloadDigester.FrameDigests> digests = startDigests(m);
        lane.execute(() -> {
            try {
                if (!closing.get()) {
                    if (digests != null) {
                        requireSession(m).onBlocks((Blocks) m, Futures.join(digests));
                        received((Blocks) m, payloadBytes((Blocks) m, ((Blocks) m).data().readableBytes()));
                    } else {
                        handle(m);
                    }
                }
            } catch (Throwable t) {
                fail(t);
            } finally {
                flushNeeds();
                if (digests != null) {
                    digests.exceptionally(t -> null).join(); // the digest threads read the frame: keep it until they are done
                }
                ReferenceCountUtil.release(m);
                queuedFrames.decrementAndGet();
                queuedBytes.addAndGet(-bytes);
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

    /**
     * NEEDs are written unflushed and flushed once this connection has no more frames waiting for
     * the lane, or every {@link #FLUSH_NEEDS}: a run of scattered one-block changes then costs one
     * system call per batch, not per NEED. Lane only.
     */
    private void flushNeeds() {
        if (unflushedNeeds > 0 && (queuedFrames.get() <= 1 || unflushedNeeds >= FLUSH_NEEDS)) {
            unflushedNeeds = 0;
            channel.flush();
        }
    }

    /** Pauses reading while too much of this connection's input waits for the lane. Event loop only. */
    private void updateAutoRead() {
        boolean room = closing.get() || !awaitingHello && !decoder.isWaitingForBudget() && queuedFrames.get() < server.settings().maxQueuedFrames()
                && queuedBytes.get() < server.settings().maxQueuedBytes();
        if (channel.config().isAutoRead() != room) {
            channel.config().setAutoRead(room);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            ctx.close(); // the peer went away; nobody to tell
        } else if (isTlsFailure(cause)) {
            // a plain-TCP client on the TLS port, or a failed handshake: no frame can reach it, so close
            LOG.log(Level.INFO, "TLS failed with " + channel.remoteAddress() + ": " + rootMessage(cause) + "; connection closed");
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
        closeAtTheLatestIn(server.settings().idleTimeout().toMillis());
        lane.execute(() -> {
            try {
                cleanup(code + ": " + message);
            } finally {
                if (linger) {
                    sendErrorAndLinger(code, message);
                } else {
                    sendErrorAndClose(code, message);
                }
            }
        });
    }

    private static boolean isTlsFailure(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException || t instanceof io.netty.handler.ssl.NotSslRecordException) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable cause) {
        Throwable t = cause;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : m.length() > 200 ? m.substring(0, 200) : m;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (lane.busy() && channel.isWritable()) {
                // the server is working on the agent's request (a restore reading a lost worker's blocks, a commit):
                // idle means the agent sends nothing while the server waits for it; asked again after the next period
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
        closing.set(true);
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
                if (restore != null && !closing.get()) {
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
            if (greeted) {
                throw new ProtocolException(ErrorCode.BAD_STATE, "HELLO may be sent only once per connection");
            }
            if (h.protocolVersion() < ProtocolLimits.MIN_PROTOCOL_VERSION) {
                throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, "this server speaks protocol versions "
                        + ProtocolLimits.MIN_PROTOCOL_VERSION + " to " + ProtocolLimits.PROTOCOL_VERSION + ", the agent offered "
                        + h.protocolVersion() + "; upgrade the agent");
            }
            principal = authenticate(h);
            token = h.token();
            agentName = h.agentName();
            // the lower of the two: a newer agent falls back to what this server speaks
            protocolVersion = Math.min(h.protocolVersion(), ProtocolLimits.PROTOCOL_VERSION);
            greeted = true;
            observe(o -> o.connected(principal, remoteAddress(), h.agentName()));
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
            return;
        }
        if (!greeted) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "the first message must be HELLO, got " + m.type());
        }
        if (m instanceof BackupBegin b) {
            beginBackup(b);
        } else if (m instanceof Entries e) {
            channel.write(requireSession(m).onEntries(e));
            progress.entries(e.startLbn() + e.count(), e.count());
            unflushedNeeds++;
        } else if (m instanceof Blocks b) {
            long bytes = payloadBytes(b, b.data().readableBytes());
            requireSession(m).onBlocks(b);
            received(b, bytes);
        } else if (m instanceof Commit c) {
            BackupSession s = requireSession(m);
            checkVolumeSize(s.volume(), c.volumeBytes());
            Committed done = s.onCommit(c.volumeBytes(), c.consistency());
            server.stats().unprovenMatches.addAndGet(s.unprovenMatches());
            long bytes = sessionBytes;
            observe(o -> o.backupEnded(principal, s.volume().name(), true, "snapshot " + done.sequence() + ": "
                    + done.newBlocks() + " new blocks, " + done.storedBytes() + " bytes stored", bytes));
            endSession();
            recordCommit(s.volume(), done.sequence());
            server.stats().commits.incrementAndGet();
            audit("snapshot.commit", "volume:" + s.volume() + "@" + done.sequence(), "ok",
                    done.newBlocks() + " new blocks, " + s.unprovenMatches() + " unproven matches asked for");
            // an agent before protocol 5 reads no snapshot id (its decoder would refuse the trailing bytes)
            channel.writeAndFlush(done.forVersion(protocolVersion));
        } else if (m instanceof Abort) {
            if (session != null) {
                BackupSession s = session;
                long bytes = sessionBytes;
                session.abandon();
                endSession();
                observe(o -> o.backupEnded(principal, s.volume().name(), false, "aborted by the agent", bytes));
                recordFailure(s.volume(), "aborted by the agent before COMMIT");
            }
        } else if (m instanceof ListSnapshots l) {
            requireIdle(m);
            VolumeId volume = volumeId(l.volume());
            authorize(IngestAction.LIST, volume);
            channel.writeAndFlush(new SnapshotLister(server.services().catalog()).list(volume));
        } else if (m instanceof Restore r) {
            startRestore(r);
        } else if (m instanceof RunReport r) {
            recordRun(r);
        } else {
            throw new ProtocolException(ErrorCode.BAD_FRAME, m.type() + " is never sent to the server");
        }
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
        VolumeId volume = volumeId(r.volume());
        authorize(IngestAction.REPORT_RUN, volume);
        if (r.endMillis() < r.startMillis()) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "RUN_REPORT for volume '" + volume + "' ends (" + r.endMillis()
                    + ") before it starts (" + r.startMillis() + "); nothing was recorded");
        }
        server.services().observer().runReported(principal, agentName, r);
        channel.writeAndFlush(RunRecorded.INSTANCE);
    }

    private void beginBackup(BackupBegin b) {
        requireIdle(b);
        VolumeId volume = volumeId(b.volume());
        authorize(IngestAction.BACKUP, volume);
        // block size 0: the volume's (set when it was created over REST or by its first backup), 4096 for a new one
        if (b.blockSize() != 0 && !ProtocolLimits.isValidBlockSize(b.blockSize())) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "block size " + b.blockSize() + " is not a power of two in "
                    + ProtocolLimits.MIN_BLOCK_SIZE + ".." + ProtocolLimits.MAX_BLOCK_SIZE + " (or 0 for the volume's)");
        }
        if (b.volumeBytes() < 0 || b.baseSequence() < 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "negative volume size or base sequence");
        }
        try {
            checkVolumeSize(volume, b.volumeBytes());
        } catch (ProtocolException e) {
            refusedAtBegin(volume, e, true);
            throw e;
        }
        long sessionId = server.nextSessionId();
        BackupReady ready;
        int blockSize;
        if (!server.volumeLocks().tryLock(volume.name(), sessionId)) {
            ProtocolException busy = new ProtocolException(ErrorCode.VOLUME_BUSY, "volume '" + volume
                    + "' has a backup in progress; one backup per volume at a time");
            refusedAtBegin(volume, busy, false); // the volume's result is the running backup's to record
            throw busy;
        }
        try {
            VolumeRecord existing = server.services().catalog().volume(volume).orElse(null);
            blockSize = b.blockSize() != 0 ? b.blockSize() : existing != null ? existing.blockSize() : DEFAULT_BLOCK_SIZE;
            if (existing != null && existing.blockSize() != blockSize) {
                throw new ProtocolException(ErrorCode.BLOCK_SIZE_MISMATCH, "volume '" + volume + "' has block size "
                        + existing.blockSize() + ", the agent sent " + blockSize + "; back it up with that block size (agent:"
                        + " --block-size " + existing.blockSize() + ", or leave the option out to use the volume's)");
            }
            if (existing == null && !VolumeRecord.isValidDomain(principal.domain())) {
                throw new ProtocolException(ErrorCode.UNAUTHORIZED, "this token names the dedup domain '" + principal.domain()
                        + "', which is not a valid domain name; ask an admin for a corrected token");
            }
            server.services().admission().admit(volume, existing, b.volumeBytes());
            server.services().dataStore().checkSpace();
            byte[] secret = new byte[BackupReady.SECRET_BYTES];
            SECRETS.nextBytes(secret);
            session = new BackupSession(sessionId, volume, blockSize, b.volumeBytes(), existing, server.services(),
                    server.settings().segmentMaxEntries(), b.baseSequence(), b.baseSnapshotId(), secret, principal.domain(),
                    server.settings().spill());
            // an agent before protocol 5 reads no reason (its decoder would refuse the trailing byte)
            ready = new BackupReady(sessionId, session.parentSequence(), blockSize, session.mode(), secret, session.fullReason())
                    .forVersion(protocolVersion);
        } catch (RuntimeException e) {
            server.volumeLocks().unlock(volume.name(), sessionId);
            refusedAtBegin(volume, e, true);
            throw e;
        }
        server.stats().sessions.incrementAndGet();
        sessionBytes = 0;
        progress = server.runningBackups().begin(sessionId, volume.name(), principal.name(), agentName, remoteAddress(), blockSize,
                b.volumeBytes(), session.parentSequence());
        int sessionBlockSize = blockSize;
        BackupReady reply = ready;
        // The decoder must know the block size before any BLOCKS can arrive, i.e. before the agent reads BACKUP_READY.
        channel.eventLoop().execute(() -> {
            decoder.blockSize(sessionBlockSize);
            digestBlockSize = sessionBlockSize;
            channel.writeAndFlush(reply);
        });
    }

    /**
     * Records a BACKUP_BEGIN refused after authorization (quota, limit, block size, busy, full disk)
     * as a backup that ended without a commit: in the agent's record (GET /api/v1/agents), in the
     * audit log ({@code backup.begin}, result {@code failed}) and, if {@code volumeResult}, as the
     * volume's last backup.
     */
    private void refusedAtBegin(VolumeId volume, RuntimeException e, boolean volumeResult) {
        String reason = codeOf(e) + ": " + messageOf(e);
        String why = "refused at BACKUP_BEGIN: " + reason;
        observe(o -> o.backupEnded(principal, volume.name(), false, why, 0));
        audit("backup.begin", "volume:" + volume, "failed", reason);
        if (volumeResult) {
            recordFailure(volume, why);
        }
    }

    /** Refuses (LIMIT_EXCEEDED) a volume size over holdfast.ingest.max-volume-size, before anything is stored. */
    private void checkVolumeSize(VolumeId volume, long volumeBytes) {
        long max = server.settings().limits().maxVolumeBytes();
        if (volumeBytes > max) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "volume '" + volume + "' would be "
                    + Long.toUnsignedString(volumeBytes) + " bytes, over this server's maximum volume size of " + max
                    + " bytes (holdfast.ingest.max-volume-size); nothing was stored. Check the size the agent reads"
                    + " for the device, or ask an operator to raise the maximum");
        }
    }

    private void startRestore(Restore r) {
        requireIdle(r);
        VolumeId volume = volumeId(r.volume());
        authorize(IngestAction.RESTORE, volume);
        var catalog = server.services().catalog();
        VolumeRecord v = catalog.requireVolume(volume);
        SnapshotRecord s = catalog.snapshot(v, r.sequence()).orElseThrow(() -> new UnknownSnapshotException(volume.name(), r.sequence()));
        if (r.fromLbn() > s.blockCount()) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "fromLbn " + r.fromLbn() + " is past the end of snapshot "
                    + r.sequence() + " (" + s.blockCount() + " blocks)");
        }
        String restored = volume.name();
        RestoreStream stream = new RestoreStream(catalog, server.services().blocks(), v, s, r.fromLbn(), channel, lane,
                this::fail, () -> restore = null).onSent(n -> observe(o -> o.restored(restored, n)))
                .keepAlive(RestoreStream.keepAliveEvery(server.settings().idleTimeout()))
                .framesOnWire(protocolVersion >= PayloadCodec.FRAMES_SINCE_VERSION);
        restore = stream;
        audit("snapshot.restore", "volume:" + volume + "@" + r.sequence(), "ok", r.fromLbn() > 0 ? "from LBN " + r.fromLbn() : "");
        stream.start();
    }

    /**
     * The principal of HELLO's token, or UNAUTHORIZED (audited). The reason never repeats the
     * token. The authenticator is asked on every connection, so a revoked token fails from the
     * next connection on.
     */
    private AccessPrincipal authenticate(Hello h) {
        String reason;
        try {
            if (h.token().isEmpty()) {
                throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MISSING,
                        "no API token: run the agent with an agent API token (ask an admin to create one)");
            }
            return server.services().authenticator().authenticate(h.token());
        } catch (AuthenticationFailedException e) {
            reason = e.getMessage();
        }
        server.stats().refused.incrementAndGet();
        audit("anonymous", "ingest.connect", "", "denied", reason);
        throw new ProtocolException(ErrorCode.UNAUTHORIZED, "token refused: " + reason);
    }

    /**
     * Refuses (UNAUTHORIZED, audited) unless HELLO's token is still valid (not revoked or expired
     * since) and the principal's role and scope allow {@code action} on {@code volume}.
     */
    private void authorize(IngestAction action, VolumeId volume) {
        String why = null;
        try {
            principal = server.services().authenticator().authenticate(token);
            if (!action.allows(principal.role())) {
                why = "role " + principal.role().wireName() + " may not " + action.verb + " volumes over the ingest port";
            } else if (!principal.mayReach(volume.name())) {
                // Same answer whether or not the volume exists: the scope is checked before the catalog.
                why = "this token may not " + action.verb + " volume '" + volume + "': it is outside the token's volume scope";
            }
        } catch (AuthenticationFailedException e) {
            why = "token refused: " + e.getMessage();
        }
        if (why != null) {
            server.stats().refused.incrementAndGet();
            audit(action.auditAction, "volume:" + volume, "denied", why);
            throw new ProtocolException(ErrorCode.UNAUTHORIZED, why);
        }
    }

    private void audit(String action, String target, String result, String detail) {
        audit(principal == null ? "anonymous" : principal.name(), action, target, result, detail);
    }

    private void audit(String who, String action, String target, String result, String detail) {
        try {
            server.services().audit().record(new AuditEvent(server.services().clock().millis(), who,
                    String.valueOf(channel.remoteAddress()).replaceFirst("^/", ""), action, target, result, detail));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "could not write an audit entry for " + action + " " + target + ": " + e.getMessage());
        }
    }

    /** The block payloads of a BLOCKS frame whose body data has {@code dataBytes}: without each block's header. */
    private static long payloadBytes(Blocks b, long dataBytes) {
        return dataBytes - (long) b.count() * Blocks.BLOCK_HEADER_BYTES;
    }

    /** Counts a BLOCKS frame's payload bytes for the running backup and the transfer rates. Lane only. */
    private void received(Blocks b, long bytes) {
        sessionBytes += bytes;
        progress.blocks(b.count(), bytes);
        String volume = session.volume().name();
        observe(o -> o.received(volume, bytes));
    }

    /** Tells the observer something; its failure must not end the connection. */
    private void observe(java.util.function.Consumer<IngestObserver> event) {
        try {
            event.accept(server.services().observer());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "could not record agent statistics: " + e);
        }
    }

    private String remoteAddress() {
        return String.valueOf(channel.remoteAddress()).replaceFirst("^/", "");
    }

    private BackupSession requireSession(Message m) {
        if (session == null) {
            throw new ProtocolException(ErrorCode.BAD_STATE, m.type() + " outside a backup (send BACKUP_BEGIN first)");
        }
        return session;
    }

    private void requireIdle(Message m) {
        if (session != null || restore != null) {
            throw new ProtocolException(ErrorCode.BAD_STATE, m.type() + " while a " + (session != null ? "backup" : "restore")
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

    private void endSession() {
        if (session != null) {
            server.volumeLocks().unlock(session.volume().name(), session.id());
            server.runningBackups().end(session.id());
            progress = null;
            session = null;
            channel.eventLoop().execute(() -> {
                decoder.blockSize(0);
                digestBlockSize = 0;
            });
        }
    }

    private void fail(Throwable t) {
        ErrorCode code = codeOf(t);
        // a lost dedup or data worker: the backup stops cleanly and can run again, not a server fault
        if (code == ErrorCode.WORKER_UNAVAILABLE) {
            LOG.log(Level.WARNING, "connection " + channel.remoteAddress() + ": backup stopped: " + messageOf(t));
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
            sendErrorAndLinger(code, messageOf(t));
        }
    }

    private void cleanup() {
        cleanup("the connection closed before the commit");
    }

    /** Abandons a session in progress (recording {@code why} as the volume's last backup result) and a restore. */
    private void cleanup(String why) {
        if (session != null) {
            BackupSession s = session;
            long bytes = sessionBytes;
            try {
                s.abandon();
            } finally {
                endSession();
                observe(o -> o.backupEnded(principal, s.volume().name(), false, why, bytes));
                recordFailure(s.volume(), why);
            }
        }
        if (restore != null) {
            restore.close();
            restore = null;
        }
    }

    /** Tells the admission how a backup ended; a failure to record never hides the backup's own result. */
    private void recordCommit(VolumeId volume, long sequence) {
        try {
            server.services().admission().committed(volume, sequence, server.services().clock().millis());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot record the backup result of volume " + volume + ": " + e, e);
        }
    }

    private void recordFailure(VolumeId volume, String message) {
        try {
            server.services().admission().failed(volume, message, server.services().clock().millis());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot record the backup result of volume " + volume + ": " + e, e);
        }
    }

    // ---- any thread ---------------------------------------------------------------------------

    /**
     * Sends ERROR for a refusal, discards what the agent still sends and closes after
     * {@link #ERROR_LINGER_MILLIS} or when the agent closes ({@link ErrorLinger}): closing on unread
     * bytes sends a TCP reset, which can destroy the ERROR before the agent reads it. Refusals
     * before HELLO_OK linger too, with the same bound: an agent whose first frame is too large or
     * whose token is refused is just as likely still writing, and lingering costs no memory (input is
     * dropped as it is read) and at most {@link #ERROR_LINGER_MILLIS} of a connection slot, which
     * the connection limits still count. Any thread.
     */
    private void sendErrorAndLinger(ErrorCode code, String message) {
        if (closing.compareAndSet(false, true)) {
            ErrorLinger.sendAndClose(channel, ErrorMessage.of(code, message), server.settings().idleTimeout().toMillis());
        }
    }

    /** How long a refused connection stays open, discarding input, for the agent to read the ERROR. */
    static final long ERROR_LINGER_MILLIS = ErrorLinger.ERROR_LINGER_MILLIS;

    /** Sends ERROR and closes at once: for the timers (no HELLO, idle, a frame slower than the minimum rate), which refuse no frame. */
    private void sendErrorAndClose(ErrorCode code, String message) {
        if (closing.compareAndSet(false, true)) {
            channel.writeAndFlush(ErrorMessage.of(code, message)).addListener(ChannelFutureListener.CLOSE);
            closeAtTheLatestIn(server.settings().idleTimeout().toMillis());
        }
    }

    /**
     * Closes the connection after {@code millis} whether or not its ERROR was written: the close
     * above waits for that write, which never completes while the agent reads nothing, and once
     * {@code closing} is set the idle timeout no longer closes it (its ERROR is the one stuck), so an
     * agent that stops reading would hold the connection for ever. Cancelled when the connection closes.
     */
    private void closeAtTheLatestIn(long millis) {
        try {
            var late = channel.eventLoop().schedule(() -> channel.close(), millis, java.util.concurrent.TimeUnit.MILLISECONDS);
            channel.closeFuture().addListener(f -> late.cancel(false));
        } catch (RejectedExecutionException e) {
            channel.close(); // the event loop is shutting down
        }
    }

    static ErrorCode codeOf(Throwable thrown) {
        Throwable t = unwrap(thrown);
        if (t instanceof ProtocolException p) {
            return p.code();
        }
        if (t instanceof UnknownVolumeException) {
            return ErrorCode.UNKNOWN_VOLUME;
        }
        if (t instanceof UnknownSnapshotException) {
            return ErrorCode.UNKNOWN_SNAPSHOT;
        }
        if (t instanceof StorageFullException) {
            return ErrorCode.STORAGE_FULL;
        }
        if (t instanceof CorruptBlockException) {
            return ErrorCode.CORRUPT_DATA;
        }
        if (t instanceof DedupUnavailableException || t instanceof BlocksUnavailableException) {
            return ErrorCode.WORKER_UNAVAILABLE; // transient: the agent runs the backup again (an older agent reads INTERNAL)
        }
        if (t instanceof CommitRejectedException c) {
            return switch (c.reason()) {
                case PARENT_MOVED -> ErrorCode.BAD_STATE;
                case BLOCK_SIZE_MISMATCH -> ErrorCode.BLOCK_SIZE_MISMATCH;
                case BAD_ENTRIES -> ErrorCode.BAD_FRAME;
            };
        }
        return ErrorCode.INTERNAL;
    }

    static String messageOf(Throwable thrown) {
        Throwable t = unwrap(thrown);
        if (t instanceof ProtocolException p) {
            String m = p.getMessage();
            String prefix = p.code() + ": ";
            return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
        }
        if (t instanceof StorageFullException f) {
            return f.advice() + "; nothing of this backup was committed, and snapshots committed before are intact";
        }
        if (t instanceof CorruptBlockException c) {
            return "damaged block on the server: " + c.getMessage();
        }
        if (t instanceof DedupUnavailableException || t instanceof BlocksUnavailableException) {
            return t.getMessage(); // names the lost worker (or that none is connected) and what to do
        }
        if (t instanceof StoreException || !(t instanceof RuntimeException) || codeOf(t) == ErrorCode.INTERNAL) {
            return "internal server error (" + t.getClass().getSimpleName() + "); see the server log";
        }
        return String.valueOf(t.getMessage());
    }

    /** The cause of a {@link CompletionException} (a dedup call to a worker fails with one), else {@code t}. */
    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }
}
