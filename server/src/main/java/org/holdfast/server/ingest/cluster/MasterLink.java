package org.holdfast.server.ingest.cluster;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.common.protocol.StaleMarks;
import org.holdfast.common.protocol.StaleMarksTaken;
import org.holdfast.common.protocol.TakeoverRecords;
import org.holdfast.common.protocol.TakeoverRecordsPart;
import org.holdfast.server.cluster.RegistrationRefusedException;
import org.holdfast.server.cluster.StartOverMark;
import org.holdfast.server.cluster.WorkerCapacity;
import org.holdfast.server.cluster.WorkerLoad;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.gc.CountsMarkDecision;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuthenticationFailedException;
import org.holdfast.server.security.Role;

/**
 * One worker's connection on the master: REGISTER first (a {@code worker} token, then the
 * registry's answer), then HEARTBEATs, each answered with HEARTBEAT_ACK. Anything else, a bad
 * token or a refused registration is answered with ERROR and the connection is closed; the worker
 * then stays (or becomes) lost. The token is checked again on every heartbeat, so a revoked
 * token, or one an admin rebound the worker away from, ends the membership within one interval.
 * Once registered, the connection also carries the master's dedup calls: a {@link DedupLink} (in
 * {@link ClusterServer#dedupLinks()}) whose handler takes the worker's answers before this one.
 *
 * <p>Threads: Netty's event loop decodes and writes; token checks and registry calls run on the
 * server's lane in arrival order. {@link #record} is written and read only on the lane.
 */
final class MasterLink extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(MasterLink.class.getName());
    /** Heartbeats a worker may send at once beyond twice its rate (a stalled worker's fixed-rate timer catches up in a burst). */
    static final int HEARTBEAT_BURST = 32;

    private final ClusterServer server;
    private final FrameDecoder decoder;
    private ChannelHandlerContext ctx;
    private boolean registerSeen; // event loop only
    private ScheduledFuture<?> registerDeadline; // event loop only
    private double heartbeatCredit = HEARTBEAT_BURST; // event loop only: each heartbeat queues work on the lane all workers share
    private long creditNanos; // event loop only
    private String token; // lane only
    private WorkerRecord record; // lane only; null until registered
    private int clusterVersion; // lane only: the version of this link's REGISTER
    private long generationSent; // lane only: the node generation REGISTERED sent (0: none), acknowledged by the first heartbeat
    private volatile DedupLink dedup; // null until registered
    private volatile RemoteRangeStore data; // null until registered
    private volatile RemoteGcGuard guard; // null until registered
    private volatile RemoteGcDeltas gc; // null until registered
    private volatile RemoteRangeSweep sweep; // null until registered
    private volatile RemoteCountsCheck countsCheck; // null until registered at cluster version 7
    private volatile boolean closing;

    MasterLink(ClusterServer server, FrameDecoder decoder) {
        this.server = server;
        this.decoder = decoder;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** A connection that has not sent all of REGISTER within lost-after is dropped: a byte now and then must not hold a slot. */
    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        long millis = server.registry().settings().lostAfter().toMillis();
        registerDeadline = ctx.executor().schedule(() -> {
            if (!registerSeen) {
                fail(ErrorCode.BAD_STATE, "no REGISTER within " + millis + " ms of connecting (holdfast.cluster.lost-after); a worker"
                        + " sends it at once: check that this is a worker, and the network between it and the master");
            }
        }, millis, TimeUnit.MILLISECONDS);
        creditNanos = System.nanoTime();
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (closing || !(msg instanceof Message m)) {
                return;
            }
            if (!registerSeen) {
                if (!(m instanceof Register r)) {
                    throw new ProtocolException(ErrorCode.BAD_STATE, "the first message on the cluster port must be REGISTER, got "
                            + m.type() + (m.type() == org.holdfast.common.protocol.MessageType.HELLO
                            ? "; agents connect to the agent port (holdfast.ingest.port), not the cluster port" : ""));
                }
                registerSeen = true;
                onLane(() -> register(r));
            } else if (m instanceof Heartbeat h) {
                takeHeartbeatCredit();
                onLane(() -> heartbeat(h));
            } else if (m instanceof TakeoverRecords q) {
                onLane(() -> answerTakeoverRecords(q));
            } else if (m instanceof StaleMarks s) {
                onLane(() -> takeStaleMarks(s));
            } else if (m instanceof ErrorMessage e) {
                // the worker refused a frame of ours and is ending the link (lingering on its side)
                LOG.log(System.Logger.Level.WARNING, "worker at " + address() + " refused a frame of the master (" + e.code() + ": "
                        + e.message().replaceAll("\\p{Cntrl}", "?") + "); its link ends, and it registers again");
                fail(ErrorCode.BAD_STATE, "the worker sent ERROR; closing the link");
            } else {
                throw new ProtocolException(ErrorCode.BAD_STATE, m.type() + " is not sent to a master's cluster port"
                        + (m instanceof Register ? " twice" : ""));
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    /**
     * Answers a node taking its worker's range over with one part of the master's records of the worker's
     * sealed logs (on the lane, as the records are written there). Only on a link registered at version 7.
     */
    private void answerTakeoverRecords(TakeoverRecords q) {
        if (clusterVersion < Register.TAKEOVER_RECORDS_VERSION) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "TAKEOVER_RECORDS on a link registered at cluster version " + clusterVersion
                    + " (it needs " + Register.TAKEOVER_RECORDS_VERSION + ")");
        }
        TakeoverRecordsPart part;
        try {
            part = server.takeoverRecords().answer(record.workerId(), q);
        } catch (RuntimeException e) {
            part = TakeoverRecordsPart.failed(q.requestId(), e.getMessage());
        }
        ctx.writeAndFlush(part);
    }

    /**
     * Takes a part of the worker's stale marks (cluster version 8, on the lane, where {@link #record} is
     * read): refused, naming the PBN, if any lies outside the worker's range (a worker marks only what its
     * own sweep freed; nothing of the part is forwarded), else handed to the server's forwarding.
     */
    private void takeStaleMarks(StaleMarks s) {
        if (record == null || clusterVersion < Register.STALE_MARKS_VERSION) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "STALE_MARKS on a link registered at cluster version " + clusterVersion
                    + " (it needs " + Register.STALE_MARKS_VERSION + ")");
        }
        org.holdfast.common.id.PbnRange range = record.range();
        for (int i = 0; i < s.count(); i++) {
            if (!range.contains(s.pbns()[i])) {
                String why = "STALE_MARKS part " + s.partId() + " names PBN " + s.pbns()[i] + " (mark " + i + "), outside worker "
                        + record.nodeName() + "'s range " + range + ": a worker marks only blocks its own sweep freed; nothing of"
                        + " the part was forwarded";
                server.refusalLog.warning("refused stale marks of worker " + record.nodeName() + " from " + address() + ": " + why);
                ctx.writeAndFlush(StaleMarksTaken.of(s.partId(), StaleMarksTaken.REFUSED, why));
                return;
            }
        }
        server.forwardStaleMarks(record.workerId(), s, ctx::writeAndFlush);
    }

    /** Refuses heartbeats beyond twice the agreed rate plus {@link #HEARTBEAT_BURST}, so a flood cannot grow the lane's queue. */
    private void takeHeartbeatCredit() {
        long now = System.nanoTime();
        long interval = server.registry().settings().heartbeatInterval().toNanos();
        heartbeatCredit = Math.min(HEARTBEAT_BURST, heartbeatCredit + (now - creditNanos) * 2.0 / interval);
        creditNanos = now;
        if (heartbeatCredit < 1) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "heartbeats arrive faster than twice per heartbeat interval ("
                    + server.registry().settings().heartbeatInterval().toMillis() + " ms, holdfast.cluster.heartbeat-interval); a"
                    + " Holdfast worker sends one per interval: check what connects with this worker token");
        }
        heartbeatCredit -= 1;
    }

    private void onLane(Runnable r) {
        try {
            server.lane().execute(() -> {
                try {
                    if (!closing) {
                        r.run();
                    }
                } catch (ProtocolException e) {
                    fail(e.code(), e.getMessage());
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "cluster connection from " + address() + " failed", e);
                    fail(ErrorCode.INTERNAL, "the master failed: " + e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            ctx.close(); // the server is closing
        }
    }

    private void register(Register r) {
        if (r.clusterVersion() < Register.MIN_CLUSTER_VERSION || r.clusterVersion() > Register.CLUSTER_VERSION) {
            throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, "this master speaks cluster protocol versions "
                    + Register.MIN_CLUSTER_VERSION + " to " + Register.CLUSTER_VERSION + ", the worker " + r.nodeName() + " version "
                    + r.clusterVersion()
                    + "; a worker of a newer release registers again with an older version by itself and works: upgrade this"
                    + " master when you can (docs/operations.md, \"Upgrading a cluster\")");
        }
        try {
            WorkerRegistry.checkNodeName(r.nodeName()); // before anything logs or audits the name: it may hold line breaks
        } catch (RegistrationRefusedException e) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, e.getMessage());
        }
        AccessPrincipal p = authenticate(r.token(), r.nodeName(), "cluster.register");
        int needed = server.settings().minClusterVersion();
        if (r.clusterVersion() < needed) {
            // after the token check, so only a worker's own token learns what the master needs, and the refusal is audited
            String why = "this master keeps its blocks on the workers (holdfast.cluster.data=workers) and runs their GC over the"
                    + " worker link, which needs cluster protocol version " + needed + "; the worker " + r.nodeName() + " speaks version "
                    + r.clusterVersion() + " (an older release: it would close its link on the first GC frame, and the blocks it"
                    + " stores could be neither protected nor swept): upgrade the worker to the master's release (docs/operations.md,"
                    + " \"Upgrading a cluster\")";
            server.refusalLog.warning("refused worker " + r.nodeName() + " from " + address() + ": " + why);
            audit(p.name(), "cluster.register", "node:" + r.nodeName(), "denied", why);
            throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, why);
        }
        WorkerRecord w;
        try {
            w = server.registry().register(r.nodeName(), p.tokenId(), address(), new WorkerCapacity(r.cpus(), r.heapMaxBytes(),
                    r.diskBytes()), r.softwareVersion(), r.archiveEpoch(), // negative before version 5: refused once fenced
                    r.generation()); // negative before version 7: not protected against a cloned range-data directory
        } catch (RegistrationRefusedException e) {
            server.refusalLog.warning("refused worker " + r.nodeName() + " from " + address() + ": " + e.getMessage());
            audit(p.name(), "cluster.register", "node:" + r.nodeName(), "denied", e.getMessage());
            throw new ProtocolException(errorCode(e.reason()), e.getMessage());
        }
        token = r.token();
        record = w;
        clusterVersion = r.clusterVersion();
        // the registry declares a silent node lost by its heartbeats, while its link, read later, may still be open: the PBNs
        // its DATA_STORED answers named since its last heartbeat are raised into the floor before REGISTERED names it
        RemoteRangeStore before = server.rangeStores().registered(w.workerId());
        if (before != null) {
            before.lost("superseded by a new registration of worker " + w.workerId()); // no answer of it completes a call from now on
        }
        server.registry().handedOut(w.workerId(), server.rangeStores().handedOutPast(w.workerId()));
        audit(p.name(), "cluster.register", "worker:" + w.workerId() + "(" + w.nodeName() + ")", "ok",
                "epoch " + w.epoch() + ", PBNs [" + w.range().first() + ", " + w.range().limit() + ")");
        LOG.log(System.Logger.Level.INFO, "worker {0} ({1}) registered from {2}: epoch {3}, PBNs [{4}, {5})", w.workerId(),
                w.nodeName(), address(), w.epoch(), Long.toString(w.range().first()), Long.toString(w.range().limit()));
        if (r.counts() != null && server.countsFence() != null) {
            countsChecked(p.name(), w, r.counts()); // before REGISTERED: no sweep of this link runs on counts it refuses
        }
        // from version 5 the floor (a node that takes the range over starts past every PBN heard handed out in it) and
        // this master's lost-after, which bounds the worker's delete lease (MasterLease)
        boolean v5 = r.clusterVersion() >= Register.ARCHIVE_EPOCH_VERSION;
        // from version 7 the node generation this registration issued, which the worker stores before it serves
        generationSent = r.clusterVersion() >= Register.NODE_GENERATION_VERSION ? server.registry().issuedGeneration(w.workerId()) : 0;
        Registered registered = new Registered(w.workerId(), w.epoch(), w.range().first(), w.range().limit(),
                Math.toIntExact(server.registry().settings().heartbeatInterval().toMillis()), server.settings().masterVersion(),
                v5 ? server.registry().pbnFloor(w.workerId()) : Registered.NO_PBN_FLOOR,
                v5 ? server.registry().settings().lostAfter().toMillis() : Registered.NO_LOST_AFTER,
                generationSent > 0 ? generationSent : Register.NO_GENERATION);
        DedupLink link = new DedupLink(w.nodeName(), ctx.channel(), server.registry().settings().lostAfter());
        String principal = p.name();
        if (r.clusterVersion() >= Register.START_OVER_REPORT_VERSION) { // a version 1 link carries no report: one sent anyway is ignored
            link.onStartOver(s -> startedOver(principal, w, s)); // on the event loop: kept even if the link closes right after
        }
        dedup = link;
        RemoteRangeStore rangeStore = new RemoteRangeStore(w.nodeName(), w.range(), ctx.channel(), server.registry().settings().lostAfter());
        rangeStore.takesRepairs(r.clusterVersion() >= Register.REPAIR_VERSION); // an older worker closes its link on DATA_REPAIR
        if (r.clusterVersion() >= Register.LOG_DIGEST_VERSION) { // an older worker's DATA_SYNCED carries no report
            rangeStore.recordsSealedLogs(w.workerId(), server.sealedLogs(), server.sealedLogOrder(), r.clusterVersion()); // from 8 also SEALED_LOGS
        }
        data = rangeStore;
        // a worker before version 4 closes its link on a GC frame: its link gets none (with blocks on the master, none is sent anyway)
        boolean gcFrames = r.clusterVersion() >= Register.GC_FRAMES_VERSION;
        RemoteGcGuard gcGuard = gcFrames ? new RemoteGcGuard(w.nodeName(), w.range(), ctx.channel(),
                server.registry().settings().lostAfter()) : null;
        guard = gcGuard;
        RemoteGcDeltas gcDeltas = gcFrames ? new RemoteGcDeltas(w.nodeName(), w.range(), ctx.channel(),
                server.registry().settings().lostAfter()) : null;
        gc = gcDeltas;
        RemoteRangeSweep rangeSweep = gcFrames ? new RemoteRangeSweep(w.nodeName(), w.range(), ctx.channel(),
                RemoteRangeSweep.ANSWER_TIMEOUT) : null;
        sweep = rangeSweep;
        // a worker before version 7 closes its link on COUNTS_CHECK: its link gets none (the check reports it not checked)
        RemoteCountsCheck counts = gcFrames && r.clusterVersion() >= Register.COUNTS_CHECK_VERSION ? new RemoteCountsCheck(w.nodeName(),
                w.range(), ctx.channel(), server.registry().settings().lostAfter()) : null;
        countsCheck = counts;
        ctx.executor().execute(() -> {
            if (closing) {
                // refused while the lane registered (fail saw no link yet): the ERROR is out and the
                // connection lingers, so its link must not go into service; it is never resumed either
                return;
            }
            // the worker's dedup answers are taken before this handler sees them
            ctx.pipeline().addBefore(ctx.name(), "dedup", link.answers());
            ctx.pipeline().addBefore(ctx.name(), "data", rangeStore.answers());
            if (gcFrames) {
                ctx.pipeline().addBefore(ctx.name(), "gc-guard", gcGuard.answers());
                ctx.pipeline().addBefore(ctx.name(), "gc", gcDeltas.answers());
                ctx.pipeline().addBefore(ctx.name(), "sweep", rangeSweep.answers());
                if (counts != null) {
                    ctx.pipeline().addBefore(ctx.name(), "counts-check", counts.answers());
                }
            }
            decoder.resume(ctx.pipeline().context(decoder));
            // REGISTERED only once the decoder takes frames after REGISTER (written before, the worker's
            // answer could be read while the decoder still held it, against the pre-REGISTER budget), and
            // before the link goes into service: the master's first dedup request must follow it
            ctx.writeAndFlush(registered);
            server.dedupLinkUp(w.workerId(), w.nodeName(), link, OtherRangePbns.of(registered)); // owed forgets first
            server.rangeStores().add(w.workerId(), rangeStore);
            if (gcFrames) {
                server.gcGuards().add(w.workerId(), gcGuard);
                server.gcDeltas().add(w.workerId(), gcDeltas);
                server.rangeSweeps().add(w.workerId(), rangeSweep);
                if (counts != null) {
                    server.countsChecks().add(w.workerId(), counts);
                }
            }
        });
    }

    /** Lifts, keeps or sets the worker's counts fence by the counts it reported (cluster version 7); logged and audited. */
    private void countsChecked(String principal, WorkerRecord w, Register.Counts counts) {
        CountsMarkDecision.Verdict v = server.countsFence().registered(w, w.epoch() == 1, counts, System.currentTimeMillis());
        if (v.action() == CountsMarkDecision.Action.NONE) {
            return;
        }
        LOG.log(v.action() == CountsMarkDecision.Action.FENCE ? System.Logger.Level.WARNING : System.Logger.Level.INFO, v.why());
        audit(principal, "cluster.worker.counts-fence", "worker:" + w.workerId() + "(" + w.nodeName() + ")",
                v.action().name().toLowerCase(java.util.Locale.ROOT), v.why());
    }

    /** The worker says it started its dedup index over at this registration: kept for the worker list, logged, audited. */
    private void startedOver(String principal, WorkerRecord w, StartOverMark s) {
        server.dedupLinks().startedOver(w.workerId(), s);
        try {
            server.lane().execute(() -> server.dedupLinks().persist(w.workerId())); // a synced write: off the event loop
        } catch (RejectedExecutionException e) {
            server.dedupLinks().persist(w.workerId()); // the server is closing: still kept for its next start
        }
        String what = "started its dedup index over (" + s.reason().apiName() + ") at epoch " + w.epoch() + "; duplicates of blocks only it"
                + " held are missed until POST /api/v1/cluster/workers/" + w.workerId() + "/rebuild";
        LOG.log(System.Logger.Level.WARNING, "worker {0} ({1}) {2}", w.workerId(), w.nodeName(), what);
        audit(principal, "cluster.worker.index-started-over", "worker:" + w.workerId() + "(" + w.nodeName() + ")", "ok", what);
    }

    /** A token mismatch travels as NODE_CONFLICT (the node is someone else's), so workers need no new code to show it. */
    private static ErrorCode errorCode(RegistrationRefusedException.Reason reason) {
        return switch (reason) {
            case NODE_CONFLICT, TOKEN_MISMATCH -> ErrorCode.NODE_CONFLICT;
            case INVALID_NODE_NAME -> ErrorCode.BAD_FRAME;
            case TOO_MANY_NODES -> ErrorCode.LIMIT_EXCEEDED;
            case NO_RANGE_LEFT -> ErrorCode.STORAGE_FULL;
            // the node is stale, the range another's: as a node conflict, which every worker release shows
            case TAKEN_OVER -> ErrorCode.NODE_CONFLICT;
            case UNFENCED_VERSION -> ErrorCode.UNSUPPORTED_VERSION;
            // every worker release retries a NODE_CONFLICT after its backoff (UNSUPPORTED_VERSION would offer an older version)
            case TAKEOVER_WAIT -> ErrorCode.NODE_CONFLICT;
            // retried as TAKEOVER_WAIT is, by every worker release
            case TAKEOVER_IN_PROGRESS -> ErrorCode.NODE_CONFLICT;
            // an older copy of the range data: every worker release shows a node conflict and retries
            case OLDER_COPY -> ErrorCode.NODE_CONFLICT;
        };
    }

    private void heartbeat(Heartbeat h) {
        AccessPrincipal p = authenticate(token, record.nodeName(), "cluster.heartbeat");
        if (!server.registry().boundTo(record.workerId(), p.tokenId())) {
            // an admin rebound the worker (a rotation, or a thief on this connection): the old token may still serve other workers
            String why = "node " + record.nodeName() + " is bound to another worker token now (an admin rebound worker "
                    + record.workerId() + "); this connection on the old token ends, register again with the new one";
            server.refusalLog.warning("dropped worker " + record.nodeName() + " from " + address() + ": " + why);
            audit(p.name(), "cluster.heartbeat", "node:" + record.nodeName(), "denied", why);
            throw new ProtocolException(ErrorCode.NODE_CONFLICT, why);
        }
        WorkerLoad load = new WorkerLoad(h.loadMilli() == Heartbeat.UNKNOWN_LOAD ? -1 : h.loadMilli(), h.heapUsedBytes(),
                h.heapMaxBytes(), h.diskFreeBytes());
        if (!server.registry().heartbeat(record.workerId(), record.epoch(), load)) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "this connection of worker " + record.nodeName() + " (epoch "
                    + record.epoch() + ") was superseded or declared lost; register again");
        }
        if (generationSent > 0) {
            // the worker stores the generation before its first heartbeat: from now on a copy from before is refused
            server.registry().generationStored(record.workerId(), record.epoch(), generationSent);
            generationSent = 0;
        }
        RemoteRangeStore rangeStore = data;
        // a report on a link of an older version is ignored, as a start-over report of version 1 is
        if (h.rangeData() != null && clusterVersion >= Register.RANGE_DATA_REPORT_VERSION && rangeStore != null) {
            if (clusterVersion >= Register.ARCHIVE_EPOCH_VERSION && h.rangeData().archiveEpoch() > 0) {
                archivedAt(p, h.rangeData().archiveEpoch(), h.rangeData().state() == Heartbeat.RangeData.SERVING);
            }
            if (h.rangeData().state() == Heartbeat.RangeData.REFUSED) {
                server.registry().rangeDataRefused(record.workerId(), record.epoch()); // a takeover refused ends
            }
            rangeStore.reported(h.rangeData(), System.currentTimeMillis());
            server.registry().handedOut(record.workerId(), rangeStore.handedOutPast());
        }
        ctx.writeAndFlush(new HeartbeatAck(h.sequence()));
    }

    /**
     * The worker's range data archives at {@code archiveEpoch} (a node that took the range over says
     * so here): kept if {@code serving}, or the link ends if another node archived the range at a higher
     * epoch meanwhile.
     */
    private void archivedAt(AccessPrincipal p, long archiveEpoch, boolean serving) {
        try {
            server.registry().archivedAt(record.workerId(), record.epoch(), archiveEpoch, serving);
        } catch (RegistrationRefusedException e) {
            server.refusalLog.warning("dropped worker " + record.nodeName() + " from " + address() + ": " + e.getMessage());
            audit(p.name(), "cluster.heartbeat", "worker:" + record.workerId() + "(" + record.nodeName() + ")", "denied", e.getMessage());
            throw new ProtocolException(errorCode(e.reason()), e.getMessage());
        }
    }

    /**
     * The token's principal; refuses (UNAUTHORIZED, audited as {@code action} denied) a missing,
     * unknown, revoked or expired token and every role but worker.
     */
    private AccessPrincipal authenticate(String token, String node, String action) {
        AccessPrincipal p;
        try {
            if (token.isEmpty()) {
                throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MISSING, "no token");
            }
            p = server.tokens().authenticate(token);
        } catch (AuthenticationFailedException e) {
            server.refusalLog.warning("refused worker " + node + " from " + address() + ": " + e.getMessage());
            audit("anonymous", action, "node:" + node, "denied", e.getMessage());
            throw new ProtocolException(ErrorCode.UNAUTHORIZED, "token refused: " + e.getMessage()
                    + "; a worker needs a token with role worker (an admin creates one; holdfast.cluster.token-file)");
        }
        if (p.role() != Role.WORKER || p.tokenId().isEmpty()) {
            String why = p.role() != Role.WORKER ? "it has role " + p.role().wireName() + ", the cluster port takes only role worker"
                    : "it is no API token, and a worker is bound to the API token it registers with";
            server.refusalLog.warning("refused worker " + node + " from " + address() + ": " + why);
            audit(p.name(), action, "node:" + node, "denied", why);
            throw new ProtocolException(ErrorCode.UNAUTHORIZED, "token refused: " + why + "; ask an admin for a worker token");
        }
        return p;
    }

    private void audit(String principal, String action, String target, String result, String detail) {
        server.audit().record(new AuditEvent(System.currentTimeMillis(), principal, address(), action, target, result, detail));
    }

    private String address() {
        return ctx.channel().remoteAddress() instanceof java.net.InetSocketAddress a ? a.getAddress().getHostAddress() + ":" + a.getPort()
                : String.valueOf(ctx.channel().remoteAddress());
    }

    /**
     * Sends ERROR and closes, lingering ({@link ErrorLinger}): the worker, or whatever connected,
     * may still be writing the refused frame, and closing on unread bytes would reset the ERROR
     * away. Refusals before REGISTER is accepted linger too, with the same bound (the ERROR written,
     * {@link ErrorLinger#ERROR_LINGER_MILLIS}; lost-after if it cannot be written): the input is
     * dropped as it is read, and the connection keeps its slot of {@link ClusterServer#MAX_CONNECTIONS}
     * until it closes. A registered worker's dedup link is taken out of service at once. Any thread.
     */
    private void fail(ErrorCode code, String message) {
        if (closing) {
            return;
        }
        closing = true;
        DedupLink link = dedup;
        if (link != null) {
            server.dedupLinks().remove(link); // no new dedup call on a connection that is ending
        }
        RemoteRangeStore rangeStore = data;
        if (rangeStore != null) {
            server.rangeStores().remove(rangeStore); // nor a data call (what it heard handed out stays there until the lane notes it)
        }
        RemoteGcGuard gcGuard = guard;
        if (gcGuard != null) {
            server.gcGuards().remove(gcGuard); // nor a protection
        }
        RemoteGcDeltas gcDeltas = gc;
        if (gcDeltas != null) {
            server.gcDeltas().remove(gcDeltas); // nor a GC delta
        }
        RemoteRangeSweep rangeSweep = sweep;
        if (rangeSweep != null) {
            server.rangeSweeps().remove(rangeSweep); // nor a sweep
        }
        RemoteCountsCheck counts = countsCheck;
        if (counts != null) {
            server.countsChecks().remove(counts); // nor a counts check
        }
        ErrorLinger.sendAndClose(ctx.channel(), ErrorMessage.of(code, message), server.registry().settings().lostAfter().toMillis());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof ProtocolException p) {
            server.refusalLog.info("cluster connection from " + address() + ": " + p.getMessage() + "; closing it");
            fail(p.code(), p.getMessage());
        } else {
            // TLS handshake failures and resets: nothing to answer
            LOG.log(System.Logger.Level.DEBUG, "cluster connection from " + address() + " failed: " + cause);
            closing = true;
            ctx.close();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            fail(ErrorCode.BAD_STATE, "nothing heard for " + server.registry().settings().lostAfter().toSeconds()
                    + " s (holdfast.cluster.lost-after); the worker is lost, register again");
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        closing = true;
        if (registerDeadline != null) {
            registerDeadline.cancel(false);
        }
        try {
            DedupLink link = dedup;
            if (link != null) {
                server.dedupLinks().remove(link);
            }
            RemoteRangeStore rangeStore = data;
            if (rangeStore != null) {
                server.rangeStores().remove(rangeStore);
            }
            RemoteGcGuard gcGuard = guard;
            if (gcGuard != null) {
                server.gcGuards().remove(gcGuard);
            }
            RemoteGcDeltas gcDeltas = gc;
            if (gcDeltas != null) {
                server.gcDeltas().remove(gcDeltas);
            }
            RemoteRangeSweep rangeSweep = sweep;
            if (rangeSweep != null) {
                server.rangeSweeps().remove(rangeSweep);
            }
            RemoteCountsCheck counts = countsCheck;
            if (counts != null) {
                server.countsChecks().remove(counts);
            }
            server.lane().execute(() -> {
                if (record != null) {
                    if (rangeStore != null) {
                        // the stores answered since the last heartbeat: a node taking the range over must start past them too
                        server.registry().handedOut(record.workerId(), rangeStore.handedOutPast());
                    }
                    server.registry().disconnected(record.workerId(), record.epoch());
                    LOG.log(System.Logger.Level.INFO, "worker {0} ({1}, epoch {2}) disconnected", record.workerId(),
                            record.nodeName(), record.epoch());
                }
            });
        } catch (RejectedExecutionException e) {
            // closing down: the registry goes with the server
        }
        super.channelInactive(ctx);
    }
}
