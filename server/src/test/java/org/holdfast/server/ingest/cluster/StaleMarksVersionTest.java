package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.DataInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.common.protocol.StaleMarks;
import org.holdfast.common.protocol.StaleMarksTaken;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.ingest.cluster.WorkerClusterVersionFallbackTest.Frame;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster version 8's stale marks between versions: a worker of this release against a master of
 * version 7 (a socket) steps down to 7 and sends no STALE_MARKS (its marks wait in its outbox); one of
 * version 8 gets the part and its TAKEN empties the outbox; a worker registered at version 7 that sends
 * STALE_MARKS to a master of this release is refused BAD_STATE.
 */
class StaleMarksVersionTest {
    private static final long FIRST = 1L << 40;

    @TempDir
    Path tmp;

    private record Heard(List<Integer> offered, List<Integer> types) {
    }

    @Test
    void versionSevenMaster_workerStepsDown_sendsNoMarks_andKeepsThem() throws Exception {
        Heard heard = new Heard(new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>());
        StaleMarkOutbox kept = exchange(7, heard);
        assertThat(heard.offered()).containsExactly(Register.STALE_MARKS_VERSION, 7);
        assertThat(heard.types()).as("heartbeats only").doesNotContain(MessageType.STALE_MARKS.code()).contains(MessageType.HEARTBEAT.code());
        assertThat(kept.pending()).as("kept for an upgraded master").hasSize(1);
    }

    @Test
    void versionEightMaster_getsThePart_andItsTakenEmptiesTheOutbox() throws Exception {
        Heard heard = new Heard(new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>());
        StaleMarkOutbox kept = exchange(8, heard);
        assertThat(heard.offered()).containsExactly(Register.STALE_MARKS_VERSION);
        assertThat(heard.types()).contains(MessageType.STALE_MARKS.code());
        assertThat(kept.pending()).isEmpty();
    }

    /** A worker with one part of marks waiting, against a master of version {@code newest} played by a socket for 1.5 s. */
    private StaleMarkOutbox exchange(int newest, Heard heard) throws Exception {
        Path node = tmp.resolve("w" + newest);
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
             WorkerRangeData data = new WorkerRangeData(node.resolve("range-data"), new DataStore.Settings(tmp.resolve("unused"), 1L << 20,
                     FsyncPolicy.COMMIT, 64, 0));
             WorkerGcMetadata gc = new WorkerGcMetadata(node.resolve("range-data").resolve("gc"), BoscSettings.defaults().withCommitters(1),
                     Duration.ofHours(1), Clock.systemUTC())) {
            Thread t = new Thread(() -> playMaster(master, newest, heard), "v" + newest + "-master");
            t.setDaemon(true);
            t.start();
            Path token = Files.writeString(tmp.resolve("token"), "hft_test");
            try (WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "w1",
                    token, null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)),
                    new LoadProbe(tmp), null, data, gc)) {
                StaleMarkOutbox outbox = w.rangeSweep().staleMarks();
                outbox.add(new long[] {FIRST + 5}, new byte[32], 1);
                w.start();
                await().atMost(Duration.ofSeconds(20)).until(() -> heard.types().size() >= 4 || heard.types().contains(
                        MessageType.STALE_MARKS.code()));
                if (newest >= Register.STALE_MARKS_VERSION) {
                    await().atMost(Duration.ofSeconds(20)).until(() -> outbox.pending().isEmpty());
                }
                return outbox;
            }
        }
    }

    private static void playMaster(ServerSocket master, int newest, Heard heard) {
        try {
            while (true) {
                try (Socket s = master.accept()) {
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    Frame register = WorkerClusterVersionFallbackTest.read(in);
                    int version = ((register.body()[0] & 0xff) << 8) | (register.body()[1] & 0xff);
                    heard.offered().add(version);
                    if (version > newest) {
                        WorkerClusterVersionFallbackTest.send(s.getOutputStream(), ErrorMessage.of(ErrorCode.UNSUPPORTED_VERSION,
                                "this master speaks cluster protocol versions 1 to " + newest + ", the worker w1 version " + version));
                        continue;
                    }
                    WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new Registered(3, 1, FIRST, FIRST + (1L << 30), 100,
                            "v" + newest, FIRST, 60_000));
                    while (true) {
                        Frame f = WorkerClusterVersionFallbackTest.read(in);
                        heard.types().add(f.type());
                        if (f.type() == MessageType.HEARTBEAT.code()) {
                            WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new HeartbeatAck(ByteBuffer.wrap(f.body()).getLong()));
                        } else if (f.type() == MessageType.STALE_MARKS.code()) {
                            WorkerClusterVersionFallbackTest.send(s.getOutputStream(), StaleMarksTaken.of(ByteBuffer.wrap(f.body()).getLong(),
                                    StaleMarksTaken.TAKEN, ""));
                        }
                    }
                }
            }
        } catch (Exception e) {
            // the test's assertions say what is missing
        }
    }

    @Test
    void versionSevenLink_sendsStaleMarks_refusedBadState() throws Exception {
        try (TestMaster m = new TestMaster(tmp.resolve("catalog"), new MembershipSettings(Duration.ofMillis(500), Duration.ofSeconds(2),
                Duration.ofSeconds(10), FIRST, MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE);
             Socket s = new Socket(InetAddress.getLoopbackAddress(), m.server.port())) {
            s.setSoTimeout(10_000);
            WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new Register(7, "old", m.workerToken(), "test", 2, 1L << 30, 1L << 40));
            DataInputStream in = new DataInputStream(s.getInputStream());
            assertThat(WorkerClusterVersionFallbackTest.read(in).type()).isEqualTo(MessageType.REGISTERED.code());
            WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new StaleMarks(1, 1, new long[] {FIRST + 1}, new byte[32]));
            Frame f = WorkerClusterVersionFallbackTest.read(in);
            while (f.type() == MessageType.HEARTBEAT_ACK.code()) {
                f = WorkerClusterVersionFallbackTest.read(in);
            }
            assertThat(f.type()).isEqualTo(MessageType.ERROR.code());
            assertThat(new String(f.body(), StandardCharsets.UTF_8)).contains("STALE_MARKS on a link registered at cluster version 7");
        }
    }
}
