package org.holdfast.server.ingest.cluster;

import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcGuardFailed;
import org.holdfast.common.protocol.GcProtect;
import org.holdfast.common.protocol.GcProtected;
import org.holdfast.common.protocol.GcSessionEnd;
import org.holdfast.common.protocol.Message;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.sweep.GraceGuard;

/**
 * The worker's end of the grace protection on its link to the master (distributed GC, thesis
 * 7.2.4): the worker decides what of its range is freed, so the blocks a backup in progress writes
 * or matches there are protected here, by the {@link GraceGuard} of its GC metadata
 * ({@link WorkerGcMetadata#guard()}), as {@code GcReferenceGuard} protects them on a standalone
 * server. GC_PROTECT raises their expiry to now + grace, tied to the master's session, and is
 * answered GC_PROTECTED (the refused entries) once the raise is durable in the log: the worker may
 * crash and come back before the session commits, and a session that does not call this worker
 * again would not notice, so the raise must survive the crash by itself. GC_SESSION_END ends a
 * session (no answer).
 *
 * <p>Its own thread ({@link BoundedLane}), not the GC delta thread: a protection, which a backup
 * waits for, must not queue behind a delta's fsync. The guard is taken once, at registration, not
 * through {@link WorkerGcMetadata}'s lock, which a delta holds across its fsync. The sessions this
 * link protected blocks for end when it ends (the master is gone or declared the worker lost, and
 * its sessions fail; their raised expiry keeps their blocks for the grace), so a master that
 * vanishes cannot hold back the range's sweep. A refusal (a PBN outside the range, GC metadata that
 * would not open or failed, too many sessions, on an archiving worker a range store that refuses,
 * e.g. because another node took the range over) is GC_GUARD_FAILED, nothing protected, and the link
 * stays; a malformed frame is one ERROR and the link closes before the guard sees anything.
 */
public final class GcGuardService extends WorkerLinkService {
    /**
     * Sessions one link may keep open at once (each holds a bitmap of the PBNs it protected, 512 KiB
     * per 4 Mi PBNs touched): far above the agent port's 1,024 connections, so only a master gone
     * wrong reaches it.
     */
    static final int MAX_OPEN_SESSIONS = 4096;

    private final WorkerGcMetadata gc;
    private final PbnRange range;
    // an archiving range store (backend s3), or null: a node whose range another node took over protects nothing
    private final WorkerRangeData fence;
    private final BoundedLane lane = new BoundedLane("holdfast-gc-guard");
    private final AnsweredStores.Link answered; // null: this link's stores get no expiry of their own
    private GraceGuard guard; // lane only, from open()
    private BoscPipeline pipeline; // lane only
    private String refusal; // lane only: why the GC metadata would not open
    private final Set<Long> sessions = ConcurrentHashMap.newKeySet(); // changed on the lane only: the sessions this link protected blocks for, not yet ended

    /** Protects through {@code gc}'s guard over {@code range}, the range of this link's REGISTERED; opened on the lane at once. */
    public GcGuardService(WorkerGcMetadata gc, PbnRange range) {
        this(gc, range, null);
    }

    /**
     * As above; with {@code fence} (the worker's archiving range store, else null) every GC_PROTECT
     * first claims the range store, so a node whose range another node took over from the bucket (a
     * later epoch: its store refuses) answers GC_GUARD_FAILED and records nothing: the protection must
     * be in the range owner's GC metadata, whose sweep is the one that frees the range's blocks.
     */
    public GcGuardService(WorkerGcMetadata gc, PbnRange range, WorkerRangeData fence) {
        this(gc, range, fence, null);
    }

    /**
     * As above; each protection also tells {@code answered} (this link's stores answered but not yet
     * protected, null: none) which of them the master protected, once the raise is logged.
     */
    GcGuardService(WorkerGcMetadata gc, PbnRange range, WorkerRangeData fence, AnsweredStores.Link answered) {
        super("GC guard");
        this.answered = answered;
        this.gc = gc;
        this.range = range;
        this.fence = fence;
        lane.run(this::open);
    }

    /** True if {@code msg} is a request this service serves. */
    static boolean isRequest(Object msg) {
        return msg instanceof GcProtect || msg instanceof GcSessionEnd;
    }

    /** Takes the guard of the GC metadata over the range (the GC delta service logs a refusal once; this one answers it). */
    private void open() {
        try {
            pipeline = gc.claim(range);
            guard = gc.guard();
        } catch (RuntimeException e) {
            refusal = "the GC metadata in " + gc.dir() + " over PBNs " + range + " would not open: " + e.getMessage();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof GcProtect p) {
            lane.submit(ctx, p.count() * 8L + 64, () -> serve(p));
        } else if (msg instanceof GcSessionEnd e) {
            // on the lane, after the protections queued before it: a later one must not open the session again
            lane.submit(ctx, 64, () -> end(e.sessionId()));
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    private Message serve(GcProtect p) {
        String nothing = "; nothing of it was protected";
        if (refusal != null || guard == null) {
            return GcGuardFailed.of(p.requestId(), "GC_PROTECT refused on the worker: " + (refusal != null ? refusal
                    : "its GC metadata is not open") + nothing);
        }
        long[] pbns = p.pbns();
        for (int i = 0; i < p.count(); i++) {
            if (!range.contains(pbns[i])) {
                return GcGuardFailed.of(p.requestId(), "GC_PROTECT entry " + i + " is PBN " + pbns[i] + ", outside this worker's range "
                        + range + nothing + " (the master asked the wrong worker: check the cluster membership)");
            }
        }
        if (!sessions.contains(p.sessionId()) && sessions.size() >= MAX_OPEN_SESSIONS) {
            return GcGuardFailed.of(p.requestId(), "GC_PROTECT for session " + p.sessionId() + " refused: " + MAX_OPEN_SESSIONS
                    + " sessions of this link are open already (the master ends each with GC_SESSION_END)" + nothing);
        }
        if (fence != null) {
            try {
                fence.claim(range); // throws the store's refusal: taken over by another node, say
            } catch (RuntimeException e) {
                return GcGuardFailed.of(p.requestId(), "GC_PROTECT refused on the worker: its range store over PBNs " + range
                        + " refuses: " + e.getMessage() + nothing);
            }
        }
        long[] work = pbns.clone(); // zeroed in place where refused
        try {
            sessions.add(p.sessionId()); // the guard ties the session from its first call on, even a refused one
            int refused = guard.protect(p.sessionId(), work, 0, p.count(), p.zeroRefused());
            if (refused == 0 || p.zeroRefused()) {
                pipeline.awaitDurable(); // see the class comment: the raise must survive a crash before the master relies on it
                if (answered != null) {
                    answered.protectedPbns(work, 0, p.count()); // the session's tie holds them now (refused entries are 0)
                }
            }
            return new GcProtected(p.requestId(), refusedEntries(p, work, refused));
        } catch (RuntimeException e) {
            return GcGuardFailed.of(p.requestId(), "GC_PROTECT failed on the worker: " + e.getMessage() + "; none of it may be relied"
                    + " on (its raised expiry may not be durable)");
        }
    }

    /** The entries the guard refused: zeroed ones, or in strict mode (nothing changed) the ones it has tombstoned. */
    private int[] refusedEntries(GcProtect p, long[] work, int refused) {
        if (refused == 0) {
            return new int[0];
        }
        List<Integer> entries = new ArrayList<>(refused);
        for (int i = 0; i < p.count(); i++) {
            if (p.zeroRefused() ? work[i] == 0 : guard.refuses(work[i])) {
                entries.add(i);
            }
        }
        if (entries.isEmpty()) {
            entries.add(0); // strict, and the refused block cannot be told any more: the call was refused all the same (as GcReferenceGuard names one)
        }
        return entries.stream().mapToInt(Integer::intValue).toArray();
    }

    private Message end(long sessionId) {
        if (sessions.remove(sessionId) && guard != null) {
            guard.sessionEnded(sessionId);
        }
        return null;
    }

    /** Ends every session this link opened (on the lane, after the request being served). */
    private void endAll() {
        if (guard != null) {
            for (long s : sessions) {
                guard.sessionEnded(s);
            }
        }
        sessions.clear();
    }

    /** Sessions this link keeps open (tests). */
    int openSessions() {
        return sessions.size();
    }

    @Override
    void linkEnded() {
        if (answered != null) {
            answered.close(); // see AnsweredStores: no session can commit what was answered over this link and not protected
        }
        lane.run(this::endAll);
        lane.shutdown();
    }
}
