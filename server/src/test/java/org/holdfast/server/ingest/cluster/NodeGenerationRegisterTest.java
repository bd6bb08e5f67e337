package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.NodeGeneration;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.ingest.RefusedWriter;
import org.holdfast.server.security.AuditEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's node generation rules over a real socket and a real catalog (cluster version 7): each
 * registration issues the next generation in REGISTERED, the first heartbeat acknowledges it, a node
 * presenting an older one (a cloned or restored range-data directory) is refused NODE_CONFLICT, logged,
 * audited and changing nothing, also after a master restart; the crash window (issued, never stored) is
 * accepted; a fresh node (0) and a version 6 worker are not refused by the rule.
 */
class NodeGenerationRegisterTest {
    private static final MembershipSettings SETTINGS = new MembershipSettings(Duration.ofMillis(200), Duration.ofSeconds(2),
            Duration.ofSeconds(3), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE);

    @TempDir
    Path dir;
    private final List<AuditEvent> audit = new CopyOnWriteArrayList<>();
    private TestMaster master;
    private String token;

    @BeforeEach
    void start() {
        master = new TestMaster(dir.resolve("catalog"), SETTINGS, audit::add);
        token = master.workerToken();
    }

    @AfterEach
    void stop() {
        master.close();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", master.server.port());
        s.setSoTimeout(10_000);
        return s;
    }

    /** Node w1 registers at {@code version} presenting {@code generation}; the master's first answer. */
    private Message register(Socket s, int version, long generation) throws IOException {
        Register r = version >= Register.NODE_GENERATION_VERSION
                ? new Register(version, "w1", token, "test", 2, 1L << 30, 1L << 40, 0, Register.Counts.NONE, generation)
                : new Register(version, "w1", token, "test", 2, 1L << 30, 1L << 40);
        s.getOutputStream().write(RefusedWriter.frame(r));
        List<Message> got = ClusterFrames.read(s.getInputStream(), 1);
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    private static void heartbeat(Socket s) throws IOException {
        s.getOutputStream().write(RefusedWriter.frame(new Heartbeat(1, 0, 1, 2, 3, null)));
        assertThat(ClusterFrames.read(s.getInputStream(), 1)).singleElement().isEqualTo(new HeartbeatAck(1));
    }

    private void awaitLost() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (master.registry.state(1) != MemberState.LOST) {
            assertThat(System.nanoTime()).as("w1 noted lost").isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    /** w1 registers presenting {@code presented}, heartbeats once (so stores what it got) and goes; the generation it got. */
    private long session(long presented) throws Exception {
        long g;
        try (Socket s = connect()) {
            g = ((Registered) register(s, Register.CLUSTER_VERSION, presented)).generation();
            heartbeat(s);
        }
        awaitLost();
        return g;
    }

    @Test
    void register_olderCopyAfterTheOriginalRegisteredAgain_refusedNodeConflict_loggedAuditedChangingNothing_alsoAfterARestart()
            throws Exception {
        long g1 = session(0); // a fresh node
        assertThat(g1).isEqualTo(1);
        // the range-data directory is copied here (holding g1); the original registers again and serves
        long g2 = session(g1);
        assertThat(g2).isEqualTo(2);
        assertThat(master.registry.nodeGeneration(1)).as("acknowledged by the first heartbeat").isEqualTo(new NodeGeneration(2, 2));
        WorkerRecord before = master.store.workers().get(0);
        audit.clear();

        try (Socket copy = connect()) {
            Message m = register(copy, Register.CLUSTER_VERSION, g1);
            assertThat(m).isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).as("retried by every worker release").isEqualTo(ErrorCode.NODE_CONFLICT);
                assertThat(e.message()).contains("range data of worker 1 on node w1 is an older copy (a cloned or restored disk?):"
                        + " generation 1, the worker is at 2").contains("Move this node's <data-dir>/range-data away")
                        .contains("delete its <data-dir>/range-data/node-generation");
            });
            assertThat(ClusterFrames.read(copy.getInputStream(), 1)).as("and the link closes").isEmpty();
        }
        assertThat(audit).singleElement().satisfies(e -> {
            assertThat(e.action()).isEqualTo("cluster.register");
            assertThat(e.result()).isEqualTo("denied");
            assertThat(e.detail()).contains("older copy");
        });
        assertThat(master.registry.state(1)).isEqualTo(MemberState.LOST);
        assertThat(master.store.workers().get(0)).as("no epoch issued").isEqualTo(before);
        assertThat(master.registry.nodeGeneration(1)).as("nothing issued").isEqualTo(new NodeGeneration(2, 2));
        assertThat(master.server.rangeStores().up(1)).as("no data call reaches it").isNull();

        master.close();
        master = new TestMaster(dir.resolve("catalog"), SETTINGS, audit::add); // kept in the catalog
        try (Socket copy = connect()) {
            assertThat(register(copy, Register.CLUSTER_VERSION, g1)).isInstanceOf(ErrorMessage.class);
        }
        assertThat(session(g2)).as("the original goes on").isEqualTo(3);
    }

    @Test
    void register_crashWindow_issuedButNeverStored_theWorkerPresentsTheOneBefore_accepted() throws Exception {
        long g1 = session(0);
        try (Socket s = connect()) { // gets g2 and dies before storing it: no heartbeat
            assertThat(((Registered) register(s, Register.CLUSTER_VERSION, g1)).generation()).isEqualTo(2);
        }
        awaitLost();
        assertThat(master.registry.nodeGeneration(1)).isEqualTo(new NodeGeneration(2, 1));
        assertThat(session(g1)).as("g2 was never acknowledged: g1 is still the worker's").isEqualTo(3);
        assertThat(master.registry.nodeGeneration(1)).isEqualTo(new NodeGeneration(3, 3));
    }

    @Test
    void register_presentingTheIssuedGenerationAcknowledgesIt_evenWithoutAHeartbeat() throws Exception {
        long g1 = session(0);
        long g2;
        try (Socket s = connect()) { // stores g2, dies before its first heartbeat
            g2 = ((Registered) register(s, Register.CLUSTER_VERSION, g1)).generation();
        }
        awaitLost();
        assertThat(session(g2)).isEqualTo(3);
        try (Socket copy = connect()) {
            assertThat(register(copy, Register.CLUSTER_VERSION, g1)).as("g2 was acknowledged by that REGISTER")
                    .isInstanceOf(ErrorMessage.class);
        }
    }

    @Test
    void register_freshNodeAndVersion6Worker_notRefusedByTheRule_version6GetsNoGeneration() throws Exception {
        session(0);
        session(1);
        assertThat(session(0)).as("a node with no range data yet: the takeover rules decide").isEqualTo(3);
        try (Socket s = connect()) {
            Registered r = (Registered) register(s, Register.REPAIR_VERSION, Register.NO_GENERATION);
            assertThat(r.generation()).as("a version 6 link: none sent, no protection").isEqualTo(Register.NO_GENERATION);
            heartbeat(s);
        }
        awaitLost();
        assertThat(master.registry.nodeGeneration(1)).as("a version 6 registration issues none").isEqualTo(new NodeGeneration(3, 3));
    }
}
