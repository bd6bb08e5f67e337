package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.ingest.RefusedWriter;
import org.holdfast.server.security.AuditLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's takeover fence over a real socket (cluster version 5): it learns a worker's archive
 * epoch from REGISTER and the range-data report, refuses a stale node of that worker (one whose range
 * data archives at a lower epoch) with NODE_CONFLICT saying what to do, also after a master restart,
 * and tells the node that takes a range over, in REGISTERED, to start past every PBN it heard the
 * worker hand out; a worker of version 4 gets no floor, and once the master holds a fence for its
 * worker id it is refused (UNSUPPORTED_VERSION: upgrade it), changing nothing.
 */
class MasterTakeoverFenceTest {
    private static final long FIRST = MembershipSettings.DEFAULT_FIRST_PBN;
    private static final MembershipSettings SETTINGS = new MembershipSettings(Duration.ofMillis(200), Duration.ofSeconds(2),
            Duration.ofSeconds(3), FIRST, MembershipSettings.DEFAULT_RANGE_SIZE);

    @TempDir
    Path dir;
    private TestMaster master;
    private String token;

    @BeforeEach
    void start() {
        master = new TestMaster(dir.resolve("catalog"), SETTINGS, AuditLog.NONE);
        token = master.workerToken();
    }

    @AfterEach
    void stop() {
        master.close();
    }

    /** Node w1 registers (version {@code version}, archive epoch {@code archive}); the master's first answer. */
    private Message register(Socket s, int version, long archive) throws IOException {
        long epoch = version >= Register.ARCHIVE_EPOCH_VERSION ? archive : Register.NO_ARCHIVE_EPOCH;
        s.getOutputStream().write(RefusedWriter.frame(new Register(version, "w1", token, "test", 2, 1L << 30, 1L << 40, epoch)));
        List<Message> got = ClusterFrames.read(s.getInputStream(), 1);
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    private static Socket connect(TestMaster m) throws IOException {
        Socket s = new Socket("127.0.0.1", m.server.port());
        s.setSoTimeout(10_000);
        return s;
    }

    /** A serving range-data report: next PBN {@code next}, archiving at {@code archive}; answered HEARTBEAT_ACK. */
    private static void report(Socket s, long next, long archive) throws IOException {
        s.getOutputStream().write(RefusedWriter.frame(new Heartbeat(1, 0, 1, 2, 3,
                new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, next, 4096, archive))));
        assertThat(ClusterFrames.read(s.getInputStream(), 1)).singleElement().isEqualTo(new HeartbeatAck(1));
    }

    /** Waits until the master has noted w1's connection closed (its lane runs that after the socket ends). */
    private void awaitLost(TestMaster m) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (m.registry.state(1) != MemberState.LOST) {
            assertThat(System.nanoTime()).as("w1 noted lost").isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    @Test
    void register_staleNodeAfterATakeover_refusedNodeConflict_andTheTakerStartsPastTheOldNodesPbns() throws Exception {
        try (Socket old = connect(master)) {
            Registered r = (Registered) register(old, Register.CLUSTER_VERSION, 1);
            assertThat(r.pbnFloor()).as("nothing heard yet: the range's first").isEqualTo(FIRST);
            report(old, FIRST + 40, 1); // the old node handed out 40 PBNs, some of them never uploaded
        }
        awaitLost(master);
        long dropped = System.nanoTime();
        try (Socket taker = connect(master)) { // a new host at once: the old node's delete lease may still run
            Message m = register(taker, Register.CLUSTER_VERSION, 0);
            assertThat(m).isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).as("retried by every worker release").isEqualTo(ErrorCode.NODE_CONFLICT);
                assertThat(e.message()).contains("worker 1 (range archived at epoch 1) was heard")
                        .contains("a takeover may start once it has been silent for holdfast.cluster.lost-after (3.0s)");
            });
        }
        Thread.sleep(Math.max(0, SETTINGS.lostAfter().toMillis() - (System.nanoTime() - dropped) / 1_000_000));
        try (Socket taker = connect(master)) { // a new host, empty range-data: its REGISTER says no epoch
            Registered r = (Registered) register(taker, Register.CLUSTER_VERSION, 0);
            assertThat(r.pbnFloor()).as("past every PBN heard from the old node").isEqualTo(FIRST + 40);
            report(taker, FIRST + 45, 2); // took the range over at epoch 2
        }
        awaitLost(master);
        master.close();
        master = new TestMaster(dir.resolve("catalog"), SETTINGS, AuditLog.NONE); // what it heard is kept

        try (Socket back = connect(master)) { // the old host with its old disk
            Message m = register(back, Register.CLUSTER_VERSION, 1);
            assertThat(m).isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.NODE_CONFLICT);
                assertThat(e.message()).contains("worker 1 was taken over at epoch 2 by another node")
                        .contains("range-data archives at epoch 1 and is stale").contains("move its <data-dir>/range-data away");
            });
            assertThat(ClusterFrames.read(back.getInputStream(), 1)).as("and the link closes").isEmpty();
        }
        assertThat(master.server.rangeStores().up(1)).as("no data call reaches it").isNull();
        try (Socket taker = connect(master)) {
            Registered r = (Registered) register(taker, Register.CLUSTER_VERSION, 2);
            assertThat(r.pbnFloor()).isEqualTo(FIRST + 45);
        }
    }

    /**
     * The registry declares a silent node lost {@code lost-after} after its last heartbeat, while its
     * link stays open until nothing was read on it for as long: PBNs its DATA_STORED answers named
     * after that heartbeat are known only to that link. A node that registers in between (a takeover,
     * or a new empty directory) must still start past them: the master may have recorded their
     * fingerprints, and a second block under one of those PBNs would be read in its place.
     */
    @Test
    void register_whileTheLostNodesLinkIsStillOpen_theTakerStartsPastThePbnsItsDataStoredAnswersNamed() throws Exception {
        MembershipSettings quick = new MembershipSettings(Duration.ofMillis(100), Duration.ofMillis(300), Duration.ofSeconds(1), FIRST,
                MembershipSettings.DEFAULT_RANGE_SIZE);
        try (TestMaster m = new TestMaster(dir.resolve("quick"), quick, AuditLog.NONE); Socket old = connect(m)) {
            String t = m.workerToken();
            old.getOutputStream().write(RefusedWriter.frame(new Register(Register.CLUSTER_VERSION, "w1", t, "test", 2, 1L << 30, 1L << 40, 1)));
            assertThat(ClusterFrames.read(old.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (m.server.rangeStores().up(1) == null) {
                assertThat(System.nanoTime()).as("w1's range store in service").isLessThan(deadline);
                Thread.sleep(5);
            }
            RemoteRangeStore store = m.server.rangeStores().up(1);
            long next = FIRST;
            // no heartbeat after REGISTER, but data answers keep the link read until the registry says lost
            while (m.registry.state(1) != MemberState.LOST) {
                assertThat(System.nanoTime()).as("w1 declared lost").isLessThan(deadline);
                java.util.concurrent.CompletableFuture<Long> stored = store.store(org.holdfast.common.protocol.PayloadCodec.RAW, 4096, 1,
                        new byte[32], new byte[4096]);
                Message request = ClusterFrames.read(old.getInputStream(), 1).get(0);
                old.getOutputStream().write(RefusedWriter.frame(new org.holdfast.common.protocol.DataStored(
                        ((org.holdfast.common.protocol.DataStoreRequest) request).requestId(), next, 1)));
                assertThat(stored.get(5, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(next);
                next++;
                Thread.sleep(50);
            }
            try (Socket taker = connect(m)) { // a new host on an empty range-data directory, at once
                taker.getOutputStream().write(RefusedWriter.frame(new Register(Register.CLUSTER_VERSION, "w1", t, "test", 2, 1L << 30,
                        1L << 40, 0)));
                Message answer = ClusterFrames.read(taker.getInputStream(), 1).get(0);
                assertThat(answer).isInstanceOf(Registered.class);
                assertThat(((Registered) answer).pbnFloor()).as("past PBN " + (next - 1) + ", which the old node's last answer named")
                        .isEqualTo(next);
            }
        }
    }

    @Test
    void register_version4Worker_getsNoFloorAndIsNotFencedByTheMaster() throws Exception {
        master.registry.register("w1", master.tokens.authenticate(token).tokenId(), "x", new org.holdfast.server.cluster.WorkerCapacity(1, 1, 1),
                "v", 3);
        master.registry.disconnected(1, 1);
        try (Socket s = connect(master)) {
            Registered r = (Registered) register(s, Register.GC_FRAMES_VERSION, 0);
            assertThat(r.pbnFloor()).isEqualTo(Registered.NO_PBN_FLOOR);
        }
    }

    @Test
    void register_version4WorkerOnceAFenceIsKnown_refusedUnsupportedVersionSayingUpgrade_changesNothing() throws Exception {
        try (Socket s = connect(master)) {
            assertThat(register(s, Register.CLUSTER_VERSION, 1)).isInstanceOf(Registered.class);
            report(s, FIRST + 40, 1); // the master now holds a fence for worker 1: epoch 1, PBNs up to FIRST + 39
        }
        awaitLost(master);
        org.holdfast.server.cluster.TakeoverFence fence = master.registry.fence(1);
        assertThat(fence.pbnFloor()).isEqualTo(FIRST + 40);

        try (Socket old = connect(master)) { // an older release on the node: it would neither say its epoch nor take the floor
            Message m = register(old, Register.GC_FRAMES_VERSION, 0);
            assertThat(m).isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
                assertThat(e.message()).contains("needs cluster protocol version 5").contains("node w1 speaks an older one")
                        .contains("upgrade the worker");
            });
            assertThat(ClusterFrames.read(old.getInputStream(), 1)).as("and the link closes").isEmpty();
        }
        assertThat(master.registry.state(1)).as("not registered: still lost").isEqualTo(MemberState.LOST);
        assertThat(master.server.rangeStores().up(1)).as("no data call reaches it").isNull();
        assertThat(master.registry.fence(1)).isEqualTo(fence);
        try (Socket upgraded = connect(master)) {
            Registered r = (Registered) register(upgraded, Register.CLUSTER_VERSION, 1);
            assertThat(r.pbnFloor()).as("the upgraded node gets the floor").isEqualTo(FIRST + 40);
        }
    }

    @Test
    void register_version4WorkerWhoseStoreHandedOutNothing_stillRegisters() throws Exception {
        try (Socket s = connect(master)) {
            assertThat(register(s, Register.CLUSTER_VERSION, 0)).isInstanceOf(Registered.class);
            report(s, FIRST, 0); // an empty store, as with blocks on the master: nothing handed out, no epoch
        }
        awaitLost(master);
        try (Socket old = connect(master)) {
            Registered r = (Registered) register(old, Register.GC_FRAMES_VERSION, 0);
            assertThat(r.pbnFloor()).isEqualTo(Registered.NO_PBN_FLOOR);
        }
    }
}
