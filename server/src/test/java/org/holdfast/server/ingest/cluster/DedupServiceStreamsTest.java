package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.DedupCandidates;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupProbe;
import org.holdfast.common.protocol.DedupRecord;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's engine serves every connection to the master (an old one may still run its queued
 * calls on its own thread after a reconnect or a master restart): the same stream number on two
 * connections must name two engine streams, or one connection ends (or uses, from another thread)
 * the other's stream. Nor may an ended connection's queued calls reach the engine: the master
 * gave them up, and the worker may have started its index over since (a new membership).
 */
class DedupServiceStreamsTest {
    @TempDir
    Path dir;

    private static DedupRecord newEntries(long requestId, long stream, long seed, long firstPbn) {
        int n = 16;
        byte[] f = new byte[n * 32];
        new Random(seed).nextBytes(f);
        long[] pbns = new long[n];
        Arrays.setAll(pbns, i -> firstPbn + i);
        boolean[] isNew = new boolean[n];
        Arrays.fill(isNew, true);
        return new DedupRecord(requestId, stream, n, n, f, pbns, isNew);
    }

    @Test
    void endStream_onAnotherConnection_leavesThisConnectionsStream() {
        try (LocalDedupWorker engine = new LocalDedupWorker(0, dir.resolve("worker"), SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC())) {
            EmbeddedChannel older = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new DedupService(engine));
            EmbeddedChannel newer = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new DedupService(engine));
            assertThat(DedupFramesBadInputTest.served(newer, newEntries(1, 5, 1, 1))).isInstanceOf(DedupDone.class);
            DedupCandidates c = (DedupCandidates) DedupFramesBadInputTest.served(older,
                    new DedupProbe(1, 5, 7, 16, 1, new long[] {3}));
            assertThat(c.candidates()).isZero();
            assertThat(DedupFramesBadInputTest.served(older, new DedupControl(2, DedupControl.END_STREAM, 5)))
                    .isInstanceOf(DedupDone.class);
            assertThat(DedupFramesBadInputTest.served(newer, newEntries(2, 5, 2, 100))).isInstanceOf(DedupDone.class);
            assertThat(engine.load().containers()).as("the newer connection's stream 5 keeps its default container").isEqualTo(1);
            older.finishAndReleaseAll();
            newer.finishAndReleaseAll();
        }
    }

    @Test
    void queuedCalls_afterTheLinkEnded_neverReachTheEngine() throws Exception {
        try (LocalDedupWorker engine = new LocalDedupWorker(0, dir.resolve("worker"), SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC())) {
            CountDownLatch busy = new CountDownLatch(1);
            CountDownLatch go = new CountDownLatch(1);
            LazyDedupWorker gated = new LazyDedupWorker(0, () -> { // holds the lane in its first call
                busy.countDown();
                try {
                    go.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return engine;
            });
            EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new DedupService(gated));
            ch.writeInbound(DedupFramesBadInputTest.encoded(newEntries(1, 5, 1, 1)));
            assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
            ch.writeInbound(DedupFramesBadInputTest.encoded(newEntries(2, 5, 2, 100))); // queued behind the first
            ch.finishAndReleaseAll();
            go.countDown();
            await().atMost(5, TimeUnit.SECONDS).until(() -> engine.engine().stats().recorded() >= 16);
            await().during(1, TimeUnit.SECONDS).atMost(3, TimeUnit.SECONDS)
                    .until(() -> engine.engine().stats().recorded() == 16);
        }
    }
}
