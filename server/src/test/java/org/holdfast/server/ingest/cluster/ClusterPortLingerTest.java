package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.ingest.RefusedWriter;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's cluster port refuses a frame while the peer is still writing it, over a real
 * socket: the writes complete, the ERROR is read, and the master closes within
 * {@link ErrorLinger#ERROR_LINGER_MILLIS}; a peer that never stops writing is cut off then.
 */
class ClusterPortLingerTest {
    private static final Duration BOUND = Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS + 3_000);

    @TempDir
    Path dir;
    private TestMaster master;
    private String workerToken;
    private final List<AuditEvent> audit = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        // lost-after well above the linger: only the linger may close these connections
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofSeconds(1), Duration.ofSeconds(5),
                Duration.ofSeconds(20), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), audit::add);
        workerToken = master.tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "test", "test").token();
    }

    @AfterEach
    void stop() {
        master.close();
    }

    private Socket connect() throws Exception {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", master.server.port()), 5000);
        return s;
    }

    private void register(RefusedWriter w) throws Exception {
        w.send(RefusedWriter.frame(new Register(Register.CLUSTER_VERSION, "w1", workerToken, "test", 2, 1L << 30, 1L << 40)));
        assertThat(w.read()).isInstanceOf(Registered.class);
    }

    @Test
    void oversizedFrame_afterRegisterWhileStillWriting_errorReadAndClosedWithinTheLinger() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            register(w);
            w.writeRefusedFrame(MessageType.HEARTBEAT.code());
            ErrorMessage e = w.expectError();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("frame length " + (ProtocolLimits.MAX_FRAME + 1) + " is over the limit");
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> master.registry.workers().get(0).state() == MemberState.LOST);
        assertThat(master.server.dedupLinks().upByWorkerId()).as("the refused worker's dedup link is gone").isEmpty();
    }

    @Test
    void oversizedFrame_beforeRegisterWhileStillWriting_errorReadAndClosedWithinTheSameBound() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            w.writeRefusedFrame(MessageType.REGISTER.code());
            ErrorMessage e = w.expectError();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("is over the limit");
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        assertThat(master.registry.workers()).as("nothing registered").isEmpty();
    }

    @Test
    void oversizedFrame_writerThatNeverStops_isCutOffAtTheLinger() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            register(w);
            Duration cut = w.writeForEverAfter(RefusedWriter.oversizedHeader(MessageType.HEARTBEAT.code()), Duration.ofSeconds(30));
            assertThat(cut).as("cut off after the linger, not after lost-after (20 s)").isLessThan(BOUND);
        }
    }
}
