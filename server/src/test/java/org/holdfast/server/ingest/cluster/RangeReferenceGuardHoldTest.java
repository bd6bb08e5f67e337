package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcProtect;
import org.holdfast.common.protocol.GcProtected;
import org.holdfast.server.catalog.ReferenceGuard;
import org.junit.jupiter.api.Test;

/**
 * {@link RangeReferenceGuard#heldByEndedLinks}: which links count as ended for a session that
 * protected blocks over them (a worker answering every GC_PROTECT at once on an embedded channel).
 */
class RangeReferenceGuardHoldTest {
    private static final PbnRange MASTER = new PbnRange(1, 1L << 40);
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));
    private static final PbnRange OTHER = new PbnRange(RANGE.limit(), RANGE.limit() + RANGE.size());

    /** A link whose worker protects everything asked, answering on the spot. */
    private static EmbeddedChannel link() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                if (msg instanceof GcProtect p) {
                    promise.setSuccess();
                    ctx.pipeline().fireChannelRead(new GcProtected(p.requestId(), new int[0]));
                } else {
                    ctx.write(msg, promise);
                }
            }
        });
        return ch;
    }

    private static RemoteGcGuard guardOn(EmbeddedChannel ch) {
        RemoteGcGuard g = new RemoteGcGuard("w1", RANGE, ch, Duration.ofSeconds(5));
        ch.pipeline().addFirst(g.answers());
        return g;
    }

    @Test
    void heldByEndedLinks_linkRemovedWhileItsChannelLingers_countsAsEndedUntilTheSessionIsReleased() {
        EmbeddedChannel ch = link();
        try {
            GcGuardLinks links = new GcGuardLinks();
            RemoteGcGuard g = guardOn(ch);
            links.add(1, g);
            RangeReferenceGuard guard = new RangeReferenceGuard(MASTER, ReferenceGuard.NONE, links);
            guard.protect(5, new long[] {RANGE.first() + 3}, 0, 1);
            assertThat(guard.heldByEndedLinks(RANGE)).as("its link is the registered one and up").isZero();

            links.remove(g); // as a refused link does while its ERROR lingers: still open, no longer in service
            assertThat(g.isUp()).isTrue();
            assertThat(guard.heldByEndedLinks(RANGE)).isEqualTo(1);
            assertThat(guard.heldByEndedLinks(OTHER)).as("another worker's range").isZero();

            guard.release(5, true);
            assertThat(guard.heldByEndedLinks(RANGE)).isZero();
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void heldByEndedLinks_linkSupersededByANewRegistration_countsAsEnded() {
        EmbeddedChannel ch = link();
        EmbeddedChannel next = link();
        try {
            GcGuardLinks links = new GcGuardLinks();
            links.add(1, guardOn(ch));
            RangeReferenceGuard guard = new RangeReferenceGuard(MASTER, ReferenceGuard.NONE, links);
            guard.protect(6, new long[] {RANGE.first() + 4}, 0, 1);
            guard.protect(7, new long[] {7}, 0, 1); // the master's own range only: nothing on the worker

            links.add(1, guardOn(next)); // the worker registered again

            assertThat(guard.heldByEndedLinks(RANGE)).as("session 6 only").isEqualTo(1);
            guard.protect(8, new long[] {RANGE.first() + 5}, 0, 1);
            assertThat(guard.heldByEndedLinks(RANGE)).as("a session on the new link is not held").isEqualTo(1);
            guard.release(6, false);
            assertThat(guard.heldByEndedLinks(RANGE)).isZero();
        } finally {
            ch.finishAndReleaseAll();
            next.finishAndReleaseAll();
        }
    }

    @Test
    void heldByEndedLinks_committedWhileItsCountsAreNotDelivered_staysHeldUntilTheyAre() {
        EmbeddedChannel ch = link();
        try {
            GcGuardLinks links = new GcGuardLinks();
            RemoteGcGuard g = guardOn(ch);
            links.add(1, g);
            List<Runnable> waiting = new ArrayList<>(); // as GC bookkeeping paused: the commit's counts are in no outbox yet
            RangeReferenceGuard guard = new RangeReferenceGuard(MASTER, ReferenceGuard.NONE, links, (range, then) -> waiting.add(then));
            guard.protect(5, new long[] {RANGE.first() + 3}, 0, 1);
            links.remove(g); // the link ended: the worker ended session 5 with it

            guard.release(5, true);

            assertThat(guard.heldByEndedLinks(RANGE)).as("committed, its RC+1 not on the worker nor in its outbox").isEqualTo(1);
            assertThat(waiting).hasSize(1);
            waiting.get(0).run(); // bookkeeping resumed and the worker acknowledged the counts
            assertThat(guard.heldByEndedLinks(RANGE)).isZero();
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
