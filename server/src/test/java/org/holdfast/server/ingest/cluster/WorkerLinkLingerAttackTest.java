package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.common.protocol.DedupAnswer;
import org.holdfast.common.protocol.DedupLookup;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.ForwardingDedupWorker;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SegmentAnswer;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.ingest.RefusedWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on a worker's lingering dedup link over a real socket (this test plays the master): the
 * dedup calls queued behind a refused frame are not run by the engine once the ERROR is on its way
 * (the master gave them up; their answers could not follow the ERROR anyway).
 */
class WorkerLinkLingerAttackTest {
    private static final Duration BOUND = Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS + 3_000);
    private static final int CALLS = 100;
    private static final int FPS_PER_CALL = 16;
    /**
     * Each lookup's time on the worker: a slow disk, so that calls are still queued when the refusal comes.
     * Longer than the worker's event loop may take to decode the burst up to the refused frame on a loaded
     * machine: a call that ended meanwhile has its answer queued behind that read, after the ERROR (not
     * counted as answered), and the lane would already be in the next call when the refusal came.
     */
    private static final long LOOKUP_MILLIS = 200;

    @TempDir
    Path dir;
    private LocalDedupWorker engine;
    private ServerSocket masterPort;
    private WorkerConnector worker;
    private final AtomicInteger lookupsRun = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        engine = new LocalDedupWorker(0, dir.resolve("worker"), SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC());
        masterPort = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        Path tokenFile = Files.writeString(dir.resolve("worker.token"), "any-token\n");
        worker = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", masterPort.getLocalPort(), null, "w1", tokenFile, null,
                "auto", "test", Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(30)), new LoadProbe(dir),
                new LazyDedupWorker(0, () -> new SlowLookups(engine)));
        worker.start();
    }

    /** The real engine, with every lookup taking {@link #LOOKUP_MILLIS} more and counted. */
    private final class SlowLookups extends ForwardingDedupWorker {
        SlowLookups(DedupWorker engine) {
            super(engine);
        }

        @Override
        public CompletableFuture<SegmentAnswer> lookup(SegmentLookup request) {
            try {
                Thread.sleep(LOOKUP_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            lookupsRun.incrementAndGet();
            return delegate.lookup(request);
        }

        @Override
        public void close() {
            // the test closes the engine
        }
    }

    @AfterEach
    void stop() throws Exception {
        worker.close();
        masterPort.close();
        engine.close();
    }

    @Test
    void lookupsQueuedBeforeARefusedFrame_notRunAfterTheError() throws Exception {
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        Random random = new Random(15);
        for (int i = 0; i < CALLS; i++) {
            byte[] fps = new byte[FPS_PER_CALL * 32];
            random.nextBytes(fps);
            burst.write(RefusedWriter.frame(new DedupLookup(i + 1, 1, FPS_PER_CALL, fps)));
        }
        burst.write(RefusedWriter.oversizedHeader(MessageType.DEDUP_LOOKUP.code()));
        try (Socket s = masterPort.accept()) {
            RefusedWriter w = new RefusedWriter(s);
            assertThat(w.read()).isInstanceOf(Register.class);
            w.send(RefusedWriter.frame(new Registered(1, 1, MembershipSettings.DEFAULT_FIRST_PBN,
                    MembershipSettings.DEFAULT_FIRST_PBN + MembershipSettings.DEFAULT_RANGE_SIZE, 1000, "test")));
            await().atMost(Duration.ofSeconds(10)).until(() -> worker.status().connected());
            w.send(burst.toByteArray()); // the calls and, at once behind them, a refused frame
            assertThat(w.expectError().code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            long answered = w.beforeError().stream().filter(m -> m instanceof DedupAnswer).count();
            assertThat(w.closedAfterError()).isLessThan(BOUND);
            Thread.sleep(4 * LOOKUP_MILLIS); // a call still in the engine at the close finishes
            // at most the call the engine was in when the refusal came runs without its answer
            long served = lookupsRun.get();
            assertThat(served).as("calls run by the engine (answers read before the ERROR: %d of %d)", answered, CALLS)
                    .isLessThanOrEqualTo(answered + 1);
        }
    }
}
