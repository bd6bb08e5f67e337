package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.ingest.RefusedWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's dedup link refuses a frame from the master while the master is still writing it, over
 * a real socket (this test plays the master): the master's writes complete, it reads the worker's
 * ERROR, the worker closes within {@link ErrorLinger#ERROR_LINGER_MILLIS} and its engine saw nothing.
 */
class WorkerLinkLingerTest {
    private static final Duration BOUND = Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS + 3_000);

    @TempDir
    Path dir;
    private LocalDedupWorker engine;
    private ServerSocket masterPort;
    private WorkerConnector worker;

    @BeforeEach
    void start() throws Exception {
        engine = new LocalDedupWorker(0, dir.resolve("worker"), SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC());
        masterPort = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        Path tokenFile = Files.writeString(dir.resolve("worker.token"), "any-token\n");
        worker = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", masterPort.getLocalPort(), null, "w1", tokenFile, null,
                "auto", "test", Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(30)), new LoadProbe(dir),
                new LazyDedupWorker(0, () -> engine));
        worker.start();
    }

    @AfterEach
    void stop() throws Exception {
        worker.close();
        masterPort.close();
        engine.close();
    }

    /** Accepts the worker's connection and registers it, as a master does. */
    private RefusedWriter registered(Socket s) throws Exception {
        RefusedWriter w = new RefusedWriter(s);
        assertThat(w.read()).isInstanceOf(Register.class);
        w.send(RefusedWriter.frame(new Registered(1, 1, MembershipSettings.DEFAULT_FIRST_PBN,
                MembershipSettings.DEFAULT_FIRST_PBN + MembershipSettings.DEFAULT_RANGE_SIZE, 1000, "test")));
        await().atMost(Duration.ofSeconds(10)).until(() -> worker.status().connected());
        return w;
    }

    @Test
    void oversizedDedupFrame_whileTheMasterStillWrites_errorReadAndClosedWithinTheLinger() throws Exception {
        try (Socket s = masterPort.accept()) {
            RefusedWriter w = registered(s);
            w.writeRefusedFrame(MessageType.DEDUP_LOOKUP.code());
            ErrorMessage e = w.expectError();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("frame length " + (ProtocolLimits.MAX_FRAME + 1) + " is over the limit");
            assertThat(w.beforeError()).as("only heartbeats before it").allMatch(m -> m instanceof Heartbeat);
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> worker.status().lastError() != null);
        assertThat(worker.status().lastError()).contains("sent a bad frame").contains("over the limit");
        assertThat(engine.engine().stats().lookups()).as("the engine saw nothing").isZero();
    }

    @Test
    void oversizedDedupFrame_masterThatNeverStopsWriting_isCutOffAtTheLinger() throws Exception {
        try (Socket s = masterPort.accept()) {
            RefusedWriter w = registered(s);
            Duration cut = w.writeForEverAfter(RefusedWriter.oversizedHeader(MessageType.DEDUP_LOOKUP.code()), Duration.ofSeconds(30));
            assertThat(cut).as("cut off after the linger").isLessThan(BOUND);
        }
    }
}
