package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.DataInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.protocol.DataStoreRequest;
import org.holdfast.common.protocol.DataSync;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.ingest.cluster.WorkerClusterVersionFallbackTest.Frame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster version 7 ({@link Register#LOG_DIGEST_VERSION}) between an archiving worker (S3Proxy) and a
 * master played by a socket: a master of version 6 refuses 7 as UNSUPPORTED_VERSION, the worker
 * registers with 6 and its DATA_SYNCED is version 6's (16 bytes, no sealed-log report, which that
 * master would refuse as trailing bytes); a master of version 7 gets the full report, naming the one
 * log the block it stored was sealed in.
 */
class SealedLogReportVersionTest {
    @TempDir
    Path tmp;
    private RangeBucket fixture;

    @BeforeEach
    void start() throws Exception {
        fixture = RangeBucket.start(tmp);
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    @Test
    void versionSixMaster_workerStepsDownToSix_dataSyncedWithoutReport() throws Exception {
        Heard heard = exchange(6);
        assertThat(heard.offered).containsExactly(Register.CLUSTER_VERSION, 7, 6);
        assertThat(heard.synced).singleElement().satisfies(b -> assertThat(b).hasSize(16));
    }

    @Test
    void versionSevenMaster_dataSyncedEndsWithAFullReport() throws Exception {
        Heard heard = exchange(7);
        assertThat(heard.offered).containsExactly(Register.CLUSTER_VERSION, 7);
        assertThat(heard.synced).singleElement().satisfies(b -> {
            assertThat(b.length).as("the one sealed log").isEqualTo(16 + 1 + 4 + 4 + 60 + 4);
            assertThat(b[16]).as("full").isEqualTo((byte) 1);
        });
    }

    private record Heard(List<Integer> offered, List<byte[]> synced) {
    }

    /** A master of version {@code newest} that sends one DATA_SYNC after REGISTERED; what the worker offered and answered. */
    private Heard exchange(int newest) throws Exception {
        Heard heard = new Heard(new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>());
        try (ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
             WorkerRangeData data = fixture.node("worker", Duration.ofSeconds(10))) {
            Thread t = new Thread(() -> playMaster(master, newest, heard), "v" + newest + "-master");
            t.setDaemon(true);
            t.start();
            Path token = Files.writeString(tmp.resolve("token"), "hft_test");
            try (WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "w1",
                    token, null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)),
                    new LoadProbe(tmp), null, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(20)).until(() -> !heard.synced().isEmpty());
            }
        }
        return heard;
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
                    WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new Registered(3, 1, 1L << 40, (1L << 40) + (1L << 30),
                            100, "v" + newest, 1L << 40, 60_000));
                    byte[] block = RangeBlocks.blocks(31, 1, false);
                    WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new DataStoreRequest(1, PayloadCodec.RAW, RangeBlocks.BS, 1,
                            RangeBlocks.fps(block), block));
                    WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new DataSync(2));
                    while (true) {
                        Frame f = WorkerClusterVersionFallbackTest.read(in);
                        if (f.type() == MessageType.DATA_SYNCED.code()) {
                            heard.synced().add(f.body());
                            return;
                        } else if (f.type() == MessageType.HEARTBEAT.code()) { // a master that stays silent is left
                            WorkerClusterVersionFallbackTest.send(s.getOutputStream(),
                                    new HeartbeatAck(java.nio.ByteBuffer.wrap(f.body()).getLong()));
                        }
                    }
                }
            }
        } catch (Exception e) {
            // the test's assertions say what is missing
        }
    }
}
