package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker of this release and a master of an older one (cluster version 1 only, played here by a
 * socket that speaks the version 1 frames): the master refuses versions 7 to 2 as UNSUPPORTED_VERSION, the
 * worker registers again with version 1 and serves, and its answer to the load-only request is the
 * version 1 DEDUP_DONE (64 bytes) even though it started its index over. A master of version 2 gets
 * version 2 and heartbeats without the range-data report (36 bytes), which it could not read; once
 * that master comes back upgraded (workers upgraded first), the worker offers the newest version again. A
 * master of version 3 gets version 3, heartbeats with the report, and nothing else from the worker; one
 * of version 4 refuses 7, 6 and 5 as trailing bytes and gets 4; one of version 5 refuses 7 and 6 and gets 5; one of
 * version 6 refuses 7's counts mark as trailing bytes and gets 6.
 */
class WorkerClusterVersionFallbackTest {
    @TempDir
    Path dir;

    static void send(OutputStream out, Message m) throws Exception {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.write(m, b);
        byte[] bytes = new byte[b.readableBytes()];
        b.readBytes(bytes);
        out.write(bytes);
        out.flush();
    }

    /** One frame: its type code and body. */
    record Frame(int type, byte[] body) {
    }

    static Frame read(DataInputStream in) throws Exception {
        int length = in.readInt();
        in.readUnsignedByte(); // frame version
        int type = in.readUnsignedByte();
        byte[] body = new byte[length - 2];
        in.readFully(body);
        return new Frame(type, body);
    }

    @Test
    void register_olderMasterRefusesVersionsTwoToFour_workerFallsBackToOneAndSendsNoStartOver() throws Exception {
        Path index = dir.resolve("dedup-worker");
        Files.createDirectories(index);
        Files.writeString(index.resolve("worker-id"), "1 1\n"); // the master will say epoch 3: a gap, so it starts over
        Path content = Files.writeString(index.resolve("stand-in-for-a-container"), "what the index held");
        Path token = Files.writeString(dir.resolve("token"), "hft_test");
        List<Integer> offered = new CopyOnWriteArrayList<>();
        List<Integer> doneBodies = new CopyOnWriteArrayList<>();
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                try {
                    for (int c = 0; c < 8; c++) {
                        try (Socket s = master.accept()) {
                            DataInputStream in = new DataInputStream(s.getInputStream());
                            Frame register = read(in);
                            assertThat(register.type()).isEqualTo(MessageType.REGISTER.code());
                            int version = ((register.body()[0] & 0xff) << 8) | (register.body()[1] & 0xff);
                            offered.add(version);
                            if (version != 1) { // what a master before version 2 answers
                                send(s.getOutputStream(), ErrorMessage.of(ErrorCode.UNSUPPORTED_VERSION, "this master speaks cluster"
                                        + " protocol version 1, the worker w1 version " + version));
                                continue;
                            }
                            send(s.getOutputStream(), new Registered(1, 3, 1L << 48, (1L << 48) + (1L << 30), 200, "old"));
                            send(s.getOutputStream(), new DedupControl(1, DedupControl.LOAD, 0));
                            for (Frame f = read(in); ; f = read(in)) {
                                if (f.type() == MessageType.DEDUP_DONE.code()) {
                                    doneBodies.add(f.body().length);
                                    break;
                                }
                            }
                        }
                    }
                } catch (Exception e) {
                    // the test's assertions say what is missing
                }
            }, "old-master");
            t.setDaemon(true);
            t.start();
            LazyDedupWorker lazy = new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index,
                    SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC()));
            try (WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "w1",
                    token, null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)),
                    new LoadProbe(dir), lazy)) {
                w.start();
                await().atMost(Duration.ofSeconds(15)).until(() -> doneBodies.size() == 1);
                assertThat(offered).as("one older version at a time").containsExactly(Register.CLUSTER_VERSION, 7, 6, 5, 4, 3, 2, 1);
                assertThat(w.status().assignment().epoch()).isEqualTo(3);
                assertThat(doneBodies).as("the version 1 DEDUP_DONE: request id and load only").containsExactly(8 + 56);
                assertThat(content).as("it did start over").doesNotExist();
                assertThat(Files.readString(index.resolve("worker-id"))).isEqualTo("1 3\n");
            } finally {
                lazy.close();
            }
        }
    }

    @Test
    void heartbeat_versionTwoMaster_workerWithRangeDataSendsNoRangeReport() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "hft_test");
        List<Integer> offered = new CopyOnWriteArrayList<>();
        List<Integer> heartbeatBodies = new CopyOnWriteArrayList<>();
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
             WorkerRangeData data = new WorkerRangeData(dir.resolve("range-data"),
                     new org.holdfast.server.store.DataStore.Settings(dir.resolve("unused"), 1L << 20,
                             org.holdfast.server.store.FsyncPolicy.COMMIT, 64, 0))) {
            Thread t = new Thread(() -> {
                try {
                    for (int c = 0; c < 7; c++) {
                        try (Socket s = master.accept()) {
                            DataInputStream in = new DataInputStream(s.getInputStream());
                            Frame register = read(in);
                            int version = ((register.body()[0] & 0xff) << 8) | (register.body()[1] & 0xff);
                            offered.add(version);
                            if (version > 2) { // what a master of version 2 answers
                                send(s.getOutputStream(), ErrorMessage.of(ErrorCode.UNSUPPORTED_VERSION, "this master speaks cluster"
                                        + " protocol versions 1 to 2, the worker w1 version " + version));
                                continue;
                            }
                            send(s.getOutputStream(), new Registered(1, 1, 1L << 48, (1L << 48) + (1L << 30), 100, "old"));
                            while (heartbeatBodies.size() < 3) {
                                Frame f = read(in);
                                if (f.type() == MessageType.HEARTBEAT.code()) {
                                    heartbeatBodies.add(f.body().length);
                                }
                            }
                        }
                    }
                } catch (Exception e) {
                    // the test's assertions say what is missing
                }
            }, "v2-master");
            t.setDaemon(true);
            t.start();
            try (WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "w1",
                    token, null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)),
                    new LoadProbe(dir), null, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(15)).until(() -> heartbeatBodies.size() >= 3);
                assertThat(offered).containsExactly(Register.CLUSTER_VERSION, 7, 6, 5, 4, 3, 2);
                assertThat(heartbeatBodies).as("version 2 heartbeats: no range-data report").containsOnly(36);
            }
        }
    }

    @Test
    void register_masterUpgradedWhileAway_workerOffersNewestAgainAndSendsRangeReport() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "hft_test");
        List<Integer> offered = new CopyOnWriteArrayList<>();
        List<Integer> upgradedHeartbeats = new CopyOnWriteArrayList<>();
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
             WorkerRangeData data = new WorkerRangeData(dir.resolve("range-data"),
                     new org.holdfast.server.store.DataStore.Settings(dir.resolve("unused"), 1L << 20,
                             org.holdfast.server.store.FsyncPolicy.COMMIT, 64, 0))) {
            Thread t = new Thread(() -> {
                try {
                    for (int c = 0; c < 8; c++) {
                        try (Socket s = master.accept()) {
                            DataInputStream in = new DataInputStream(s.getInputStream());
                            Frame register = read(in);
                            int version = ((register.body()[0] & 0xff) << 8) | (register.body()[1] & 0xff);
                            offered.add(version);
                            boolean upgraded = c == 7; // connections 0 to 6: a master of version 2; then it comes back upgraded
                            if (version > 2 && !upgraded) {
                                send(s.getOutputStream(), ErrorMessage.of(ErrorCode.UNSUPPORTED_VERSION, "this master speaks cluster"
                                        + " protocol versions 1 to 2, the worker w1 version " + version));
                                continue;
                            }
                            send(s.getOutputStream(), new Registered(1, c, 1L << 48, (1L << 48) + (1L << 30), 100, upgraded ? "new" : "old"));
                            for (int heard = 0; heard < 3; ) {
                                Frame f = read(in);
                                if (f.type() == MessageType.HEARTBEAT.code()) {
                                    heard++;
                                    if (upgraded) {
                                        upgradedHeartbeats.add(f.body().length);
                                    }
                                }
                            }
                            // then the old master stops (closing the link) for its upgrade
                        }
                    }
                } catch (Exception e) {
                    // the test's assertions say what is missing
                }
            }, "upgraded-master");
            t.setDaemon(true);
            t.start();
            try (WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "w1",
                    token, null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)),
                    new LoadProbe(dir), null, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(15)).until(() -> upgradedHeartbeats.size() >= 3);
                assertThat(offered).as("refused, stepped down, then the newest again to the master that came back")
                        .containsExactly(Register.CLUSTER_VERSION, 7, 6, 5, 4, 3, 2, Register.CLUSTER_VERSION);
                assertThat(upgradedHeartbeats).as("version 7 heartbeats (as 5's): the range-data report with its archive epoch")
                        .containsOnly(61);
            }
        }
    }

    /** What a master of an older release heard: versions offered, REGISTER and HEARTBEAT body sizes, other frame types. */
    private record Heard(List<Integer> offered, List<Integer> registerBodies, List<Integer> heartbeatBodies, List<Integer> otherFrames) {
        Heard() {
            this(new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>());
        }
    }

    /**
     * Plays a master of version {@code newest} on {@code master} for {@code connections} connections: a REGISTER
     * above it is answered with {@code refusal}'s ERROR, else with REGISTERED, and then it reads until three heartbeats.
     */
    private static void olderMaster(ServerSocket master, int connections, int newest, IntFunction<ErrorMessage> refusal, Heard heard) {
        Thread t = new Thread(() -> {
            try {
                for (int c = 0; c < connections; c++) {
                    try (Socket s = master.accept()) {
                        DataInputStream in = new DataInputStream(s.getInputStream());
                        Frame register = read(in);
                        int version = ((register.body()[0] & 0xff) << 8) | (register.body()[1] & 0xff);
                        heard.offered().add(version);
                        heard.registerBodies().add(register.body().length);
                        if (version > newest) {
                            send(s.getOutputStream(), refusal.apply(version));
                            continue;
                        }
                        send(s.getOutputStream(), new Registered(1, 1, 1L << 48, (1L << 48) + (1L << 30), 100, "v" + newest));
                        while (heard.heartbeatBodies().size() < 3) {
                            Frame f = read(in);
                            if (f.type() == MessageType.HEARTBEAT.code()) {
                                heard.heartbeatBodies().add(f.body().length);
                            } else {
                                heard.otherFrames().add(f.type());
                            }
                        }
                    }
                }
            } catch (Exception e) {
                // the test's assertions say what is missing
            }
        }, "v" + newest + "-master");
        t.setDaemon(true);
        t.start();
    }

    /** A worker with range data (local) connecting to {@code master}. */
    private WorkerConnector worker(ServerSocket master, WorkerRangeData data) throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "hft_test");
        return new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "w1", token, null, "auto",
                "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)), new LoadProbe(dir), null, data);
    }

    private WorkerRangeData rangeData() {
        return new WorkerRangeData(dir.resolve("range-data"), new org.holdfast.server.store.DataStore.Settings(dir.resolve("unused"),
                1L << 20, org.holdfast.server.store.FsyncPolicy.COMMIT, 64, 0));
    }

    @Test
    void register_versionThreeMaster_workerStepsDownToThreeOnceAndReportsRangeData() throws Exception {
        Heard heard = new Heard();
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()); WorkerRangeData data = rangeData()) {
            // what a master of version 3 (whose workers know no GC frame) answers
            olderMaster(master, 6, 3, v -> ErrorMessage.of(ErrorCode.UNSUPPORTED_VERSION, "this master speaks cluster protocol versions"
                    + " 1 to 3, the worker w1 version " + v), heard);
            try (WorkerConnector w = worker(master, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(15)).until(() -> heard.heartbeatBodies().size() >= 3);
                assertThat(heard.offered()).as("refused four times, then version 3").containsExactly(Register.CLUSTER_VERSION, 7, 6, 5, 4, 3);
                assertThat(heard.heartbeatBodies()).as("version 3 heartbeats: with the range-data report").containsOnly(53);
                assertThat(heard.otherFrames()).as("nothing but heartbeats from the worker").isEmpty();
            }
        }
    }

    @Test
    void register_versionFourMasterRefusesTheArchiveEpochAsTrailingBytes_workerStepsDownToFour() throws Exception {
        Heard heard = new Heard();
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()); WorkerRangeData data = rangeData()) {
            // a version 4 master's decoder parses REGISTER before it reads the version
            olderMaster(master, 5, 4, v -> ErrorMessage.of(ErrorCode.BAD_FRAME, "REGISTER has 8 trailing bytes"), heard);
            try (WorkerConnector w = worker(master, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(15)).until(() -> heard.heartbeatBodies().size() >= 3);
                assertThat(heard.offered()).as("refused three times as BAD_FRAME, then version 4")
                        .containsExactly(Register.CLUSTER_VERSION, 7, 6, 5, 4);
                assertThat(heard.registerBodies().get(2)).as("version 6's REGISTER is version 5's").isEqualTo(heard.registerBodies().get(3));
                assertThat(heard.registerBodies().get(3) - heard.registerBodies().get(4)).as("version 5 ends with the archive epoch")
                        .isEqualTo(8);
                assertThat(heard.heartbeatBodies()).as("version 4 heartbeats: the range-data report without the epoch").containsOnly(53);
            }
        }
    }

    @Test
    void register_versionFiveMasterRefusesSix_workerStepsDownToFive() throws Exception {
        Heard heard = new Heard();
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()); WorkerRangeData data = rangeData()) {
            // a version 5 master parses the same REGISTER and refuses the version
            olderMaster(master, 4, 5, v -> ErrorMessage.of(ErrorCode.UNSUPPORTED_VERSION, "this master speaks cluster protocol versions"
                    + " 1 to 5, the worker w1 version " + v), heard);
            try (WorkerConnector w = worker(master, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(15)).until(() -> heard.heartbeatBodies().size() >= 3);
                assertThat(heard.offered()).as("refused twice, then version 5").containsExactly(Register.CLUSTER_VERSION, 7, 6, 5);
                assertThat(heard.heartbeatBodies()).as("version 5 heartbeats: the report with its archive epoch").containsOnly(61);
                assertThat(heard.otherFrames()).isEmpty();
            }
        }
    }

    @Test
    void register_versionSixMasterRefusesTheCountsMarkAsTrailingBytes_workerStepsDownToSix() throws Exception {
        Heard heard = new Heard();
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()); WorkerRangeData data = rangeData()) {
            // a version 6 master reads REGISTER up to the archive epoch and finds the counts mark's and the generation's 32 bytes left over
            olderMaster(master, 3, 6, v -> ErrorMessage.of(ErrorCode.BAD_FRAME, "REGISTER has 32 trailing bytes"), heard);
            try (WorkerConnector w = worker(master, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(15)).until(() -> heard.heartbeatBodies().size() >= 3);
                assertThat(heard.offered()).as("refused once as BAD_FRAME, then version 6").containsExactly(Register.CLUSTER_VERSION, Register.COUNTS_MARK_VERSION, 6);
                assertThat(heard.registerBodies().get(1) - heard.registerBodies().get(2))
                        .as("version 7 ends with the counts mark and the node generation").isEqualTo(32);
                assertThat(heard.heartbeatBodies()).as("version 6 heartbeats, as 5's").containsOnly(61);
                assertThat(heard.otherFrames()).isEmpty();
            }
        }
    }
}
