package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.DataInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.Registered;
import org.holdfast.common.protocol.TakeoverRecords;
import org.holdfast.common.protocol.TakeoverRecordsPart;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.ingest.cluster.WorkerClusterVersionFallbackTest.Frame;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TAKEOVER_RECORDS on a real link (cluster version 7): a worker node on an empty range-data directory
 * registers as a dead worker whose logs are in the bucket (S3Proxy), asks the master (played by a socket
 * answering from a real {@link SealedLogStore}) for its records and checks each log it adopts: an honest
 * bucket is taken over and read bit for bit; a log cut at a record boundary is refused, and the bucket is
 * left as it was.
 */
class TakeoverRecordsLinkTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 30));
    private static final long WORKER = 3;

    @TempDir
    Path tmp;
    private RangeBucket fixture;
    private ObjectStore look;
    private TwoSealedLogs logs;
    private MetadataDb catalog;
    private SealedLogStore records;
    private final AtomicInteger asked = new AtomicInteger();

    @BeforeEach
    void deadWorkerReported() throws Exception {
        fixture = RangeBucket.start(tmp);
        look = fixture.look;
        logs = TwoSealedLogs.archive(fixture, WORKER, RANGE, 41);
        catalog = MetadataDb.open(tmp.resolve("master-catalog"));
        records = new SealedLogStore(catalog);
        records.apply(WORKER, logs.report());
    }

    @AfterEach
    void stop() throws Exception {
        catalog.close();
        fixture.close();
    }

    @Test
    void honestBucket_recordsAskedOnTheLink_takenOverAndReadBitForBit() throws Exception {
        try (ServerSocket master = master(); WorkerRangeData data = fixture.node("heir", Duration.ofSeconds(10));
             WorkerConnector w = connector(master, data)) {
            w.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> data.epoch() == 2);
            assertThat(asked.get()).isEqualTo(1);
            RangeBlocks.assertStoreReads(data.store(), logs.firstPbns(), logs.first());
            RangeBlocks.assertStoreReads(data.store(), logs.secondPbns(), logs.second());
        }
    }

    @Test
    @Tag("slow") // the refusal itself is TakeoverSealedLogsTest's; this shows it over the link
    void logCutAtARecordBoundary_takeoverRefused_bucketUnchanged() throws Exception {
        TwoSealedLogs.Cut cut = logs.cutSecond(fixture, tmp);
        List<String> before = look.list(WorkerKeys.prefix(WORKER));

        try (ServerSocket master = master(); WorkerRangeData data = fixture.node("heir", Duration.ofSeconds(10));
             WorkerConnector w = connector(master, data)) {
            w.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> asked.get() >= 1);
            assertThatThrownBy(() -> data.claim(RANGE)).hasMessageContaining("the takeover of worker " + WORKER + "'s range is refused: log "
                    + cut.key() + " is " + cut.at() + " bytes in the bucket, but the worker sealed it at " + cut.sealed().length + " bytes");
            assertThat(data.store()).isNull();
        }
        assertThat(look.list(WorkerKeys.prefix(WORKER))).as("nothing claimed or written").isEqualTo(before);
    }

    private ServerSocket master() throws Exception {
        ServerSocket master = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> playMaster(master), "v7-master");
        t.setDaemon(true);
        t.start();
        return master;
    }

    private WorkerConnector connector(ServerSocket master, WorkerRangeData data) throws Exception {
        Path token = Files.writeString(tmp.resolve("token"), "hft_test");
        return new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "heir", token, null, "auto",
                "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)), new LoadProbe(tmp), null, data);
    }

    /** Registers the worker as worker 3 over RANGE, then answers TAKEOVER_RECORDS from the catalog's records, and heartbeats. */
    private void playMaster(ServerSocket master) {
        try (Socket s = master.accept()) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            WorkerClusterVersionFallbackTest.read(in); // REGISTER at version 7
            WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new Registered(WORKER, 1, RANGE.first(), RANGE.limit(), 100, "v7",
                    RANGE.first(), 60_000));
            while (true) {
                Frame f = WorkerClusterVersionFallbackTest.read(in);
                ByteBuffer b = ByteBuffer.wrap(f.body());
                if (f.type() == MessageType.TAKEOVER_RECORDS.code()) {
                    TakeoverRecordsPart part = records.part(WORKER, new TakeoverRecords(b.getLong(), b.getInt()));
                    asked.incrementAndGet();
                    WorkerClusterVersionFallbackTest.send(s.getOutputStream(), part);
                } else if (f.type() == MessageType.HEARTBEAT.code()) {
                    WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new HeartbeatAck(b.getLong()));
                }
            }
        } catch (Exception e) {
            // the link ended with the test; its assertions say what is missing
        }
    }
}
