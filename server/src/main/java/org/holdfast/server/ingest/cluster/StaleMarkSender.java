package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.io.UncheckedIOException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.StaleMarks;
import org.holdfast.common.protocol.StaleMarksTaken;

/**
 * The worker's end of the stale marks on a link registered at cluster version 8: sends the parts of its
 * {@link StaleMarkOutbox} to the master one at a time, oldest first (STALE_MARKS), when the link comes up
 * and whenever a sweep freed blocks, and takes the master's STALE_MARKS_TAKEN: a part taken or refused is
 * deleted (a refusal is logged with the master's words: the part is bad, sending it again cannot help),
 * one to come back later is kept and sent again after {@code retry}. Its own thread reads the files; a
 * link that ends stops it, and the parts wait for the next link.
 */
final class StaleMarkSender extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(StaleMarkSender.class.getName());

    private final StaleMarkOutbox outbox;
    private final Duration retry;
    private final ScheduledThreadPoolExecutor lane = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("holdfast-stale-marks", true));
    private final Runnable kick = this::kick;
    private volatile Channel channel;
    private long inFlight; // lane only: the part sent and not answered, 0 none
    private long waiting; // lane only: the part the master answered "later" for, logged once at INFO (0 none)
    private long waitingSince; // lane only: System.nanoTime() of that first "later"

    /** Sends from {@code outbox}; a part the master cannot take yet is sent again after {@code retry}. */
    StaleMarkSender(StaleMarkOutbox outbox, Duration retry) {
        this.outbox = outbox;
        this.retry = retry;
        lane.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        outbox.listen(kick);
        kick();
    }

    private void kick() {
        try {
            lane.execute(this::sendNext);
        } catch (RejectedExecutionException e) {
            // the link ended: the parts wait for the next one
        }
    }

    private void sendNext() {
        Channel ch = channel;
        if (inFlight != 0 || ch == null || !ch.isActive()) {
            return;
        }
        for (long id = outbox.oldest(); id != 0; id = outbox.oldest()) {
            StaleMarks m;
            try {
                m = outbox.read(id); // null: not a part, dropped
            } catch (UncheckedIOException e) {
                LOG.log(System.Logger.Level.WARNING, e.getMessage() + "; trying again in " + retry.toMillis() + " ms");
                lane.schedule(this::sendNext, retry.toMillis(), TimeUnit.MILLISECONDS);
                return;
            }
            if (m != null) {
                inFlight = id;
                ch.writeAndFlush(m);
                return;
            }
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof StaleMarksTaken t)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            lane.execute(() -> taken(t));
        } catch (RejectedExecutionException e) {
            // the link is ending: the part stays and goes again over the next link
        }
    }

    private void taken(StaleMarksTaken t) {
        if (t.partId() != inFlight) {
            return; // not the part sent (a master answers each once): nothing to drop
        }
        inFlight = 0;
        if (t.status() != StaleMarksTaken.LATER && waiting == t.partId()) {
            LOG.log(System.Logger.Level.INFO, "the master took stale marks part " + t.partId() + " after it waited "
                    + Duration.ofNanos(System.nanoTime() - waitingSince).toSeconds() + " s");
            waiting = 0;
        }
        switch (t.status()) {
            case StaleMarksTaken.TAKEN -> outbox.delete(t.partId());
            case StaleMarksTaken.REFUSED -> {
                LOG.log(System.Logger.Level.WARNING, "the master refused stale marks part " + t.partId() + " of this worker ("
                        + t.message().replaceAll("\\p{Cntrl}", "?") + "); it is dropped, nothing of it was forwarded");
                outbox.delete(t.partId());
            }
            default -> {
                // once at INFO per part, then DEBUG: a worker down for an hour would otherwise log ~450 lines
                boolean first = waiting != t.partId();
                if (first) {
                    waiting = t.partId();
                    waitingSince = System.nanoTime();
                }
                LOG.log(first ? System.Logger.Level.INFO : System.Logger.Level.DEBUG, "the master could not forward stale marks part "
                        + t.partId() + " yet (" + t.message().replaceAll("\\p{Cntrl}", "?") + "); it is kept and sent again every "
                        + retry.toMillis() + " ms" + (first ? " (further retries of this part are logged at DEBUG)" : ""));
                lane.schedule(this::sendNext, retry.toMillis(), TimeUnit.MILLISECONDS);
                return;
            }
        }
        sendNext();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        outbox.unlisten(kick);
        lane.shutdown(); // never interrupted mid-read; a task still queued sees the link inactive, a part in flight stays
        super.channelInactive(ctx);
    }
}
