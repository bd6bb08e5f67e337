package org.holdfast.server.ingest.cluster;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.holdfast.common.protocol.DedupAnswer;
import org.holdfast.common.protocol.DedupCandidates;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupFailed;
import org.holdfast.common.protocol.DedupForget;
import org.holdfast.common.protocol.DedupLookup;
import org.holdfast.common.protocol.DedupProbe;
import org.holdfast.common.protocol.DedupRecord;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.Message;
import org.holdfast.server.engine.DedupLoad;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.ProbeAnswer;
import org.holdfast.server.engine.SegmentAnswer;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SegmentProbe;
import org.holdfast.server.engine.SegmentRecord;
import org.holdfast.common.protocol.StartOverReason;

/**
 * The worker's end of the dedup calls on its link to the master: runs each request against the
 * worker's engine ({@link DedupWorker}, a {@code LocalDedupWorker}) on one thread off the event
 * loop, in arrival order (so a stream's calls stay in order), and answers with the request's id;
 * an engine failure is answered DEDUP_FAILED and the link stays. A malformed frame is answered
 * ERROR and the link closes (after discarding the rest, {@link ErrorLinger}) before anything
 * reaches the engine. When the link ends, the streams it
 * opened are ended (a master that reconnects numbers its streams afresh) and the calls still
 * queued are dropped. The engine belongs to the caller.
 *
 * <p>The engine serves every connection, and an old one may still be in a call after a
 * reconnect: so a master's stream number names an engine stream of this connection only
 * ({@link #engineStream}), never another connection's with the same number.
 */
public final class DedupService extends WorkerLinkService {
    private static final System.Logger LOG = System.getLogger(DedupService.class.getName());
    private final DedupWorker worker;
    private final ExecutorService lane = Executors.newSingleThreadExecutor(new DefaultThreadFactory("holdfast-dedup-worker", true));
    /** Engine stream numbers, unique across this worker's connections. */
    private static final AtomicLong NEXT_ENGINE_STREAM = new AtomicLong();
    /** This connection's streams: the master's number to the engine's. */
    private final Map<Long, Long> streams = new ConcurrentHashMap<>();
    /** A start-over the master has not been told yet (null: a cluster version 1 link, which cannot carry it). */
    private final AtomicReference<StartOver> unreported;
    /** Forgets of these PBNs go through the engine's gate (null: every forget is full). */
    private final OtherRangePbns others;

    /** A start-over of the index at a registration: when (epoch ms) and why (sent as its DEDUP_DONE code). */
    record StartOver(long atMillis, StartOverReason reason) {
        StartOver {
            java.util.Objects.requireNonNull(reason, "reason");
        }
    }

    public DedupService(DedupWorker worker) {
        this(worker, null);
    }

    /**
     * As above, on a link of cluster version 2: the answer to each load-only request carries the
     * start-over in {@code unreported}, which is cleared once such an answer was sent (a link that
     * breaks first leaves it for the next one).
     */
    DedupService(DedupWorker worker, AtomicReference<StartOver> unreported) {
        this(worker, unreported, null);
    }

    /** As above; a forget of a PBN in {@code others} (another worker's range) is {@link DedupWorker#forgetIfHeld}. */
    DedupService(DedupWorker worker, AtomicReference<StartOver> unreported, OtherRangePbns others) {
        super("dedup");
        this.worker = worker;
        this.unreported = unreported;
        this.others = others;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof DedupLookup || msg instanceof DedupProbe || msg instanceof DedupRecord || msg instanceof DedupForget
                || msg instanceof DedupControl)) {
            ctx.fireChannelRead(msg);
            return;
        }
        Message m = (Message) msg;
        try {
            lane.execute(() -> {
                // an ended link's queued calls: the master gave them up, and the worker may have
                // started its index over since (a new membership), which they must not teach; a link
                // that sent its ERROR has ended too, though it stays open while it lingers (and an
                // answer could not follow the ERROR anyway)
                if (ctx.channel().isActive() && !ErrorLinger.isLingering(ctx.channel())) {
                    StartOver s = unreported != null && m instanceof DedupControl c && c.op() == DedupControl.LOAD ? unreported.get() : null;
                    ctx.writeAndFlush(serve(m, s)).addListener(w -> {
                        if (s != null && w.isSuccess()) {
                            unreported.compareAndSet(s, null);
                        }
                    });
                }
            });
        } catch (RejectedExecutionException e) {
            ctx.close(); // the worker is stopping
        }
    }

    /** Runs {@code m}; a DEDUP_DONE answer carries {@code startOver} if it is not null. */
    private Message serve(Message m, StartOver startOver) {
        long id = requestId(m);
        try {
            if (m instanceof DedupLookup l) {
                SegmentAnswer a = worker.lookup(new SegmentLookup(engineStream(l.stream()), l.fps(), l.count())).join();
                return new DedupAnswer(id, a.count(), exact(a.pbns(), a.count()), exact(a.runs(), a.count()), load(a.load()));
            } else if (m instanceof DedupProbe p) {
                SegmentProbe probe = new SegmentProbe(engineStream(p.stream()), p.key(), p.count(), p.words(), p.samples());
                ProbeAnswer a = worker.probe(probe).join();
                return new DedupCandidates(id, a.candidates(), load(a.load()));
            } else if (m instanceof DedupRecord r) {
                worker.record(new SegmentRecord(engineStream(r.stream()), r.fps(), r.count(), r.pbns(), r.isNew(), r.placed()))
                        .join();
            } else if (m instanceof DedupForget f) {
                forget(f);
            } else {
                DedupControl c = (DedupControl) m;
                if (c.op() == DedupControl.END_STREAM) {
                    Long s = streams.remove(c.stream());
                    if (s != null) {
                        worker.closeStream(s);
                    }
                } else if (c.op() == DedupControl.FLUSH) {
                    worker.flush();
                }
            }
            return startOver == null ? new DedupDone(id, load(worker.load()))
                    : new DedupDone(id, load(worker.load()), startOver.atMillis(), startOver.reason().code());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "dedup request " + m.type() + " failed", e);
            return DedupFailed.of(id, m.type() + " failed on the worker: " + e);
        }
    }

    /** Forgets {@code f}'s PBNs: those of other workers' ranges through the engine's gate, the others in full. */
    private void forget(DedupForget f) {
        int n = f.count();
        int gated = 0;
        for (int i = 0; i < n && others != null; i++) {
            gated += others.contains(f.pbns()[i]) ? 1 : 0;
        }
        if (gated == 0) {
            worker.forget(f.pbns(), f.fps(), n);
            return;
        }
        long[] fullPbns = new long[n - gated];
        byte[] fullFps = new byte[(n - gated) * 32];
        long[] gatedPbns = new long[gated];
        byte[] gatedFps = new byte[gated * 32];
        int full = 0;
        int g = 0;
        for (int i = 0; i < n; i++) {
            long p = f.pbns()[i];
            if (others.contains(p)) {
                gatedPbns[g] = p;
                System.arraycopy(f.fps(), i * 32, gatedFps, g++ * 32, 32);
            } else {
                fullPbns[full] = p;
                System.arraycopy(f.fps(), i * 32, fullFps, full++ * 32, 32);
            }
        }
        if (full > 0) {
            worker.forget(fullPbns, fullFps, full);
        }
        worker.forgetIfHeld(gatedPbns, gatedFps, gated);
    }

    /** The engine's number for the master's stream {@code stream} on this connection (a new one the first time). */
    private long engineStream(long stream) {
        return streams.computeIfAbsent(stream, s -> NEXT_ENGINE_STREAM.incrementAndGet());
    }

    private static long requestId(Message m) {
        if (m instanceof DedupLookup l) {
            return l.requestId();
        } else if (m instanceof DedupProbe p) {
            return p.requestId();
        } else if (m instanceof DedupRecord r) {
            return r.requestId();
        } else if (m instanceof DedupForget f) {
            return f.requestId();
        }
        return ((DedupControl) m).requestId();
    }

    private static long[] exact(long[] a, int n) {
        return a.length == n ? a : java.util.Arrays.copyOf(a, n);
    }

    private static int[] exact(int[] a, int n) {
        return a.length == n ? a : java.util.Arrays.copyOf(a, n);
    }

    /** The load as it travels: stored entries, containers, lookups, SFI hits, containers loaded, busy ns, memory bytes. */
    static long[] load(DedupLoad l) {
        return new long[] {l.storedEntries(), l.containers(), l.lookups(), l.sfiHits(), l.containersLoaded(), l.busyNanos(),
                l.memoryBytes()};
    }

    @Override
    void linkEnded() {
        try {
            lane.execute(() -> {
                for (Long s : streams.values()) {
                    worker.closeStream(s);
                }
                streams.clear();
            });
        } catch (RejectedExecutionException e) {
            // stopping: the engine goes with the worker
        }
        lane.shutdown();
    }
}
