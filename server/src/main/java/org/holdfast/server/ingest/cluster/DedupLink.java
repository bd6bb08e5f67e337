package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.protocol.DedupAnswer;
import org.holdfast.common.protocol.DedupCandidates;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupFailed;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.server.cluster.StartOverMark;

/**
 * The master's end of one worker's link for dedup calls: sends each request with a fresh id and
 * completes it when the worker's answer with that id arrives, so several calls can be in flight.
 * When the link ends (or a call times out) every pending and later call fails with
 * {@link DedupWorkerLostException}. {@link #answers()} is the pipeline handler that takes the
 * worker's answers; an answer to an id that is not pending is a protocol error (the link closes).
 */
public final class DedupLink {
    private static final System.Logger LOG = System.getLogger(DedupLink.class.getName());
    private final String name;
    private final PendingCalls calls;
    private volatile IndexReport indexReport; // null until the worker's first answer on this link
    private volatile java.util.function.Consumer<StartOverMark> onStartOver = s -> { };
    private boolean startOverHeard; // event loop only: one registration starts over at most once
    private volatile OtherRangePbns distrusted; // null: every answer taken as it is

    /** Worker {@code name} (for messages) on {@code channel}; a call not answered within {@code timeout} ends the link's use. */
    public DedupLink(String name, Channel channel, Duration timeout) {
        this.name = name;
        this.calls = new PendingCalls(channel, timeout, this::lostError);
    }

    /** The worker's node name. */
    public String name() {
        return name;
    }

    /**
     * Takes this worker's lookup answers naming a PBN in {@code others} (another worker's range) as misses from now
     * on: it was owed more forgets than the master kept ({@link OwedForgets}), so such an entry may name a freed block.
     */
    void distrust(OtherRangePbns others) {
        distrusted = others;
    }

    /** The PBNs whose answers are misses on this link, or null. */
    OtherRangePbns distrusted() {
        return distrusted;
    }

    /** False once the link ended or a call timed out. */
    public boolean isUp() {
        return calls.isUp();
    }

    /** A fresh request id. */
    long nextId() {
        return calls.nextId();
    }

    /** Sends {@code request} (carrying {@code id}); the future completes with the worker's answer. */
    CompletableFuture<Message> call(long id, Message request) {
        return calls.call(id, request);
    }

    /** The error a call fails with when the worker's engine failed it (DEDUP_FAILED). */
    DedupWorkerFailedException failedError() {
        return new DedupWorkerFailedException("dedup worker " + name + " failed a request (the master's and the worker's logs say"
                + " why); the backup stops without counting anything as a duplicate; run it again, and check that worker if it fails again");
    }

    /** The error a call through a lost link fails with. */
    DedupWorkerLostException lostError(String why) {
        return new DedupWorkerLostException("dedup worker " + name + " is lost: " + why + "; the backup stops without"
                + " counting anything as a duplicate; run it again: the workers still connected serve it"
                + " (see the worker's log for why it was lost)");
    }

    /** The link ended or went silent: every pending and later call fails with {@code why}. */
    public void lost(String why) {
        calls.lost(why);
    }

    /**
     * The index size the worker's last answer on this link carried, or null before its first answer:
     * the master learns it only from answers to its own dedup calls.
     */
    public IndexReport indexReport() {
        return indexReport;
    }

    /**
     * Asks the worker for its load without waiting: its answer sets {@link #indexReport()}. Nobody
     * needs the answer, so a failure is only the link's (a silent worker is lost as on any call).
     */
    void askLoad() {
        long id = nextId();
        call(id, new DedupControl(id, DedupControl.LOAD, 0));
    }

    /**
     * Called (on the link's event loop) with the first start-over the worker reports on this link
     * (cluster version 2, DEDUP_DONE); later ones are ignored, so a worker repeating it on every answer
     * cannot flood the log and audit. Not set on a version 1 link, whose reports are ignored.
     */
    void onStartOver(java.util.function.Consumer<StartOverMark> listener) {
        onStartOver = listener;
    }

    /**
     * The start-over a DEDUP_DONE heard at {@code nowMillis} (this master's clock) reports, or null: the
     * wire's reason code becomes the enum here (the decoder refused any code that is no reason), and
     * a time in the worker's future is taken as now.
     */
    static StartOverMark startOver(DedupDone d, long nowMillis) {
        if (!d.startedOver()) {
            return null;
        }
        return new StartOverMark(Math.min(d.startedOverAtMillis(), nowMillis), StartOverReason.ofCode(d.startOverReason()), nowMillis);
    }

    /** Every answer carries the worker's load; its first figure is the fingerprints its index holds. */
    private void noteLoad(long[] load) {
        indexReport = new IndexReport(load[0], System.currentTimeMillis());
    }

    /** Requests in flight (tests). */
    int pendingCount() {
        return calls.size();
    }

    /** The handler that takes this worker's DEDUP_ANSWER, DEDUP_CANDIDATES, DEDUP_DONE and DEDUP_FAILED; other messages pass on. */
    public ChannelInboundHandlerAdapter answers() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof DedupAnswer a) {
                    CompletableFuture<Message> p = take(a.requestId(), a);
                    noteLoad(a.load());
                    p.complete(a);
                } else if (msg instanceof DedupCandidates c) {
                    CompletableFuture<Message> p = take(c.requestId(), c);
                    noteLoad(c.load());
                    p.complete(c);
                } else if (msg instanceof DedupDone d) {
                    CompletableFuture<Message> p = take(d.requestId(), d);
                    noteLoad(d.load());
                    StartOverMark s = startOver(d, System.currentTimeMillis());
                    if (s != null && !startOverHeard) {
                        startOverHeard = true;
                        onStartOver.accept(s);
                    }
                    p.complete(d);
                } else if (msg instanceof DedupFailed f) {
                    // the worker's own words stay in this log: they may name its paths, which an agent need not see
                    LOG.log(System.Logger.Level.WARNING, "dedup worker " + name + " failed a request: " + f.message());
                    take(f.requestId(), f).completeExceptionally(failedError());
                } else {
                    ctx.fireChannelRead(msg);
                }
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) throws Exception {
                lost("its link closed");
                super.channelInactive(ctx);
            }
        };
    }

    private CompletableFuture<Message> take(long id, Message m) {
        return calls.take(id, m);
    }
}
