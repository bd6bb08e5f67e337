package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.holdfast.common.protocol.DataStoreRequest;
import org.holdfast.common.protocol.DataSync;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.SealedLogsRecorded;
import org.holdfast.server.ingest.cluster.WorkerClusterVersionFallbackTest.Frame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster version 8 ({@link Register#SYNC_REPORT_VERSION}) between an archiving worker (S3Proxy) and a
 * master played by a socket, with a log sealed and uploaded after the link's DATA_SYNC: a master of
 * version 7 refuses 8 as UNSUPPORTED_VERSION, the worker registers with 7 and sends no SEALED_LOGS (that
 * master would close the link on the unknown frame), its DATA_SYNCED still carries the report; a master
 * of version 8 gets SEALED_LOGS between syncs, the one after the seal naming only the new log. (A version
 * 7 link to a master of this release: SealedLogsBetweenSyncsTest, refused BAD_STATE.)
 */
class SyncReportVersionTest {
    @TempDir
    Path tmp;

    @Test
    void versionSevenMaster_workerStepsDownToSeven_noSealedLogsFrame_dataSyncedStillReports() throws Exception {
        Heard heard = exchange(7);
        assertThat(heard.offered).containsExactly(Register.CLUSTER_VERSION, 7);
        assertThat(heard.synced).singleElement().satisfies(b -> assertThat(b.length).as("DATA_SYNCED with a report").isGreaterThan(16));
        assertThat(heard.pushes).as("no SEALED_LOGS to a version 7 master").isEmpty();
    }

    @Test
    void versionEightMaster_sealedLogsBetweenSyncs_theLastNamesOnlyTheNewLog() throws Exception {
        Heard heard = exchange(8);
        assertThat(heard.offered).containsExactly(Register.CLUSTER_VERSION);
        byte[] last = heard.pushes.get(heard.pushes.size() - 1);
        ByteBuffer b = ByteBuffer.wrap(last);
        assertThat(b.get(8)).as("incremental").isEqualTo((byte) 0);
        assertThat(b.getInt(8 + 1 + 4)).as("one sealed log: the one sealed after the sync").isEqualTo(1);
        assertThat(b.getInt(8 + 1 + 4 + 4)).as("its log id").isEqualTo(heard.sealed().get());
    }

    private record Heard(List<Integer> offered, List<byte[]> synced, List<byte[]> pushes, java.util.concurrent.atomic.AtomicInteger sealed) {
    }

    /**
     * A master of version {@code newest}: REGISTERED, a block stored and synced, a second block stored; the
     * test then seals and uploads the worker's active log (no DATA_SYNC), and the master listens, acknowledging
     * SEALED_LOGS, until one names a log (version 8) or for 1 s after the upload (10 heartbeats, version 7).
     */
    private Heard exchange(int newest) throws Exception {
        Heard heard = new Heard(new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>(),
                new java.util.concurrent.atomic.AtomicInteger());
        AtomicBoolean stored = new AtomicBoolean();
        AtomicBoolean done = new AtomicBoolean();
        try (RangeBucket fixture = RangeBucket.start(tmp); ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
             WorkerRangeData data = fixture.node("worker", Duration.ofSeconds(10))) {
            Thread t = new Thread(() -> playMaster(master, newest, heard, stored, done), "v" + newest + "-master");
            t.setDaemon(true);
            t.start();
            try (WorkerConnector w = PlayedMaster.worker(master, tmp, data)) {
                w.start();
                await().atMost(Duration.ofSeconds(20)).until(stored::get);
                heard.sealed().set(data.store().sealActiveLog() - 1); // the log sealed now
                data.store().archive().awaitUploads(10_000);
                if (newest < Register.SYNC_REPORT_VERSION) {
                    Thread.sleep(1_000); // 10 heartbeats, each a chance to report the upload
                } else {
                    await().atMost(Duration.ofSeconds(10)).until(() -> heard.pushes().stream().anyMatch(b -> b.length > 8 + 13));
                }
                done.set(true);
                await().atMost(Duration.ofSeconds(5)).until(() -> !t.isAlive());
            }
        }
        return heard;
    }

    private static void playMaster(ServerSocket master, int newest, Heard heard, AtomicBoolean stored, AtomicBoolean done) {
        try {
            while (true) {
                try (Socket s = master.accept()) {
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    OutputStream out = s.getOutputStream();
                    if (!PlayedMaster.registers(s, in, newest, heard.offered())) {
                        continue;
                    }
                    store(out, 1, 31);
                    WorkerClusterVersionFallbackTest.send(out, new DataSync(2));
                    while (!done.get()) {
                        Frame f = WorkerClusterVersionFallbackTest.read(in);
                        if (f.type() == MessageType.DATA_SYNCED.code()) {
                            heard.synced().add(f.body());
                            store(out, 3, 32);
                        } else if (f.type() == MessageType.DATA_STORED.code() && ByteBuffer.wrap(f.body()).getLong() == 3) {
                            stored.set(true);
                        } else if (f.type() == MessageType.SEALED_LOGS.code()) {
                            heard.pushes().add(f.body());
                            WorkerClusterVersionFallbackTest.send(out, new SealedLogsRecorded(ByteBuffer.wrap(f.body()).getLong()));
                        } else if (f.type() == MessageType.HEARTBEAT.code()) { // a master that stays silent is left
                            WorkerClusterVersionFallbackTest.send(out, new HeartbeatAck(ByteBuffer.wrap(f.body()).getLong()));
                        }
                    }
                    return;
                }
            }
        } catch (Exception e) {
            // the test's assertions say what is missing
        }
    }

    private static void store(OutputStream out, long requestId, long seed) throws Exception {
        byte[] block = RangeBlocks.blocks(seed, 1, false);
        WorkerClusterVersionFallbackTest.send(out, new DataStoreRequest(requestId, PayloadCodec.RAW, RangeBlocks.BS, 1,
                RangeBlocks.fps(block), block));
    }
}
