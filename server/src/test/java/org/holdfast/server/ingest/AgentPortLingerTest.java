package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent port refuses a frame while the agent is still writing it, over a real socket: the
 * agent's writes complete (the server drains and drops them instead of resetting the connection),
 * it reads the ERROR with its reason, and the server closes within {@link ErrorLinger#ERROR_LINGER_MILLIS};
 * the lingering connection reserves nothing and still counts against the connection limits.
 */
class AgentPortLingerTest {
    /** The linger plus time for a busy machine's timers and the client's reads. */
    private static final Duration BOUND = Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS + 3_000);

    @TempDir
    Path dir;
    private IngestHarness harness;

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private Socket connect() throws Exception {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", harness.port()), 5000);
        return s;
    }

    private static void hello(RefusedWriter w) throws Exception {
        w.send(RefusedWriter.frame(new Hello(ProtocolLimits.PROTOCOL_VERSION, "linger-probe", TestTokens.DEFAULT_AGENT)));
        assertThat(w.read()).isInstanceOf(HelloOk.class);
    }

    @Test
    void oversizedFrame_afterHelloWhileStillWriting_errorReadAndClosedWithinTheLinger() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            hello(w);
            w.writeRefusedFrame(MessageType.ENTRIES.code()); // 8 MiB behind a refused header: completes only if the server drains
            ErrorMessage e = w.expectError();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("frame length " + (ProtocolLimits.MAX_FRAME + 1) + " is over the limit");
            assertThat(harness.server().openConnections()).as("a lingering connection still counts").isEqualTo(1);
            assertThat(harness.server().inflightBytes()).as("discarded bytes reserve nothing").isZero();
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }

    @Test
    void oversizedFrame_beforeHelloWhileStillWriting_errorReadAndClosedWithinTheSameBound() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            w.writeRefusedFrame(MessageType.HELLO.code());
            ErrorMessage e = w.expectError();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("is over the limit");
            assertThat(harness.server().inflightBytes()).isZero();
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }

    @Test
    void refusedToken_withFramesPipelinedBehindTheHello_errorReadNotAReset() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            // HELLO with a bad token, and at once a frame behind it: the server holds it unparsed, refuses the token, and drains the rest
            w.send(RefusedWriter.frame(new Hello(ProtocolLimits.PROTOCOL_VERSION, "linger-probe", "not-a-token-0123456789")));
            w.send(RefusedWriter.frame(new org.holdfast.common.protocol.ListSnapshots("vol")));
            ErrorMessage e = w.expectError();
            assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED);
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }

    @Test
    void oversizedFrame_writerThatNeverStops_isCutOffAtTheLinger() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            hello(w);
            Duration cut = w.writeForEverAfter(RefusedWriter.oversizedHeader(MessageType.BLOCKS.code()), Duration.ofSeconds(30));
            assertThat(cut).as("cut off after the linger, not after the idle timeout (10 min)").isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }
}
