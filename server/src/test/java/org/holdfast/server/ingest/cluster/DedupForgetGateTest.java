package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Random;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupForget;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which forgets a worker sends through its engine's gate: only PBNs of another worker's range (as the
 * master forwards stale marks); the master's own PBNs and the worker's own range are forgotten in full,
 * even for fingerprints the engine's memory does not know, as before the gate existed.
 */
class DedupForgetGateTest {
    private static final long FIRST = 1L << 48;
    private static final long SIZE = 1L << 40;

    @TempDir
    Path dir;

    @Test
    void otherRangePbns_fromWorker2sRegistration_theOtherWorkersRangesOnly() {
        OtherRangePbns others = OtherRangePbns.of(new Registered(2, 1, FIRST + SIZE, FIRST + 2 * SIZE, 200, "t"));
        assertThat(others.firstWorkerPbn()).isEqualTo(FIRST);
        assertThat(others.contains(FIRST - 1)).as("the master's own PBNs").isFalse();
        assertThat(others.contains(1)).isFalse();
        assertThat(others.contains(FIRST)).as("worker 1's").isTrue();
        assertThat(others.contains(FIRST + SIZE)).as("its own").isFalse();
        assertThat(others.contains(FIRST + 2 * SIZE - 1)).isFalse();
        assertThat(others.contains(FIRST + 2 * SIZE)).as("worker 3's").isTrue();
        assertThat(OtherRangePbns.of(new Registered(3, 1, 5, 10, 200, "t"))).as("not the layout: no gate").isNull();
    }

    @Test
    void forget_otherRangeGated_mastersAndOwnInFull() {
        try (LocalDedupWorker engine = new LocalDedupWorker(0, dir.resolve("worker"), SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC())) {
            OtherRangePbns others = OtherRangePbns.of(new Registered(2, 1, FIRST + SIZE, FIRST + 2 * SIZE, 200, "t"));
            EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new DedupService(engine, null, others));
            byte[] fps = new byte[4 * 32]; // none of them ever recorded here
            new Random(7).nextBytes(fps);
            long[] pbns = {FIRST - 5, FIRST + 3, FIRST + SIZE + 3, FIRST + 2 * SIZE + 3}; // master's, worker 1's, own, worker 3's

            assertThat(DedupFramesBadInputTest.served(ch, new DedupForget(1, 4, pbns, fps))).isInstanceOf(DedupDone.class);

            SungemStats s = engine.engine().sungemStats();
            assertThat(s.forgetsNotHeld()).as("worker 1's and worker 3's skipped").isEqualTo(2);
            assertThat(s.staleMarks()).as("the master's and its own marked, as always").isEqualTo(2);
            ch.finishAndReleaseAll();
        }
    }
}
