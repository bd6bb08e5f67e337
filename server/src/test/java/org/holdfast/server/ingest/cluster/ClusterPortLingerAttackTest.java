package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.Register;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.ingest.RefusedWriter;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on a lingering connection of the master's cluster port, over real sockets: a REGISTER
 * pipelined behind a refused frame registers nothing, and a registration still running on the lane
 * when the connection is refused does not put its dedup link into service on the lingering connection.
 */
class ClusterPortLingerAttackTest {
    private static final Duration BOUND = Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS + 3_000);

    @TempDir
    Path dir;
    private TestMaster master;
    private String workerToken;
    private final CountDownLatch registering = new CountDownLatch(1);
    private final CountDownLatch goOn = new CountDownLatch(1);
    private volatile boolean holdRegistration;

    @BeforeEach
    void start() {
        // the audit entry of an accepted REGISTER is written on the lane in the middle of the registration: a test may hold it there
        AuditLog audit = e -> {
            if (holdRegistration && e.action().equals("cluster.register") && e.result().equals("ok")) {
                registering.countDown();
                try {
                    goOn.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofSeconds(1), Duration.ofSeconds(5),
                Duration.ofSeconds(20), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), audit);
        workerToken = master.tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "test", "test").token();
    }

    @AfterEach
    void stop() {
        goOn.countDown();
        master.close();
    }

    private Socket connect() throws Exception {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", master.server.port()), 5000);
        return s;
    }

    private byte[] register() {
        return RefusedWriter.frame(new Register(Register.CLUSTER_VERSION, "w1", workerToken, "test", 2, 1L << 30, 1L << 40));
    }

    @Test
    void registerPipelinedBehindARefusedFrame_registersNothing() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            byte[] heartbeat = RefusedWriter.frame(new Heartbeat(1, 0, 0, 0, 0));
            byte[] reg = register();
            byte[] both = new byte[heartbeat.length + reg.length];
            System.arraycopy(heartbeat, 0, both, 0, heartbeat.length);
            System.arraycopy(reg, 0, both, heartbeat.length, reg.length);
            w.send(both); // one write: the REGISTER arrives in the same read as the refused HEARTBEAT
            assertThat(w.expectError().code()).isEqualTo(ErrorCode.BAD_STATE);
            assertThat(w.beforeError()).isEmpty();
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        Thread.sleep(200); // the lane would have registered it by now
        assertThat(master.registry.workers()).as("nothing registered").isEmpty();
    }

    @Test
    void refusalWhileTheLaneRegisters_dedupLinkNeverInService() throws Exception {
        holdRegistration = true;
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            w.send(register());
            assertThat(registering.await(10, TimeUnit.SECONDS)).as("the registration reached the lane").isTrue();
            // while the lane is inside the registration: more than the master buffers before REGISTER is accepted
            w.send(new byte[ClusterServer.BEFORE_REGISTER_BYTES + 1]);
            assertThat(w.expectError().code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            goOn.countDown();
            // keep writing a byte now and then so the connection lingers (no quiet close) while we look
            long until = System.nanoTime() + Duration.ofMillis(1_000).toNanos();
            while (System.nanoTime() < until) {
                w.send(new byte[1]);
                assertThat(master.server.dedupLinks().upByWorkerId()).as("a dedup link on a connection that sent its ERROR").isEmpty();
                Thread.sleep(50);
            }
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> master.server.dedupLinks().upByWorkerId().isEmpty());
    }

    @Test
    void refusedConnectionsOverThePerSourceLimit_allClosedAndNoSlotLeaks() throws Exception {
        java.util.List<Socket> churn = new java.util.ArrayList<>();
        try {
            byte[] heartbeat = RefusedWriter.frame(new Heartbeat(1, 0, 0, 0, 0)); // refused: REGISTER comes first
            for (int i = 0; i < ClusterServer.MAX_PER_SOURCE + 8; i++) {
                Socket s = connect();
                churn.add(s);
                s.getOutputStream().write(heartbeat);
            }
            for (Socket s : churn) {
                s.setSoTimeout((int) BOUND.toMillis());
                java.io.InputStream in = s.getInputStream();
                try {
                    while (in.read(new byte[4096]) >= 0) {
                        // the ERROR (or nothing, over the limit) until the master closes
                    }
                } catch (java.net.SocketException reset) {
                    // over the limit: closed at once, possibly with our HEARTBEAT unread
                }
            }
        } finally {
            for (Socket s : churn) {
                s.close();
            }
        }
        // the master counts a source's connections down when each close completes, which may trail our EOF by a moment
        await().atMost(Duration.ofSeconds(5)).ignoreExceptions().untilAsserted(() -> {
            try (Socket s = connect()) {
                RefusedWriter w = new RefusedWriter(s);
                w.send(register());
                assertThat(w.read()).as("a slot is free again").isInstanceOf(org.holdfast.common.protocol.Registered.class);
            }
        });
    }
}
