package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.common.protocol.DataRead;
import org.holdfast.common.protocol.DataReadAnswer;
import org.holdfast.common.protocol.DataStoreRequest;
import org.holdfast.common.protocol.DataStored;
import org.holdfast.common.protocol.DataSync;
import org.holdfast.common.protocol.DataSynced;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.ingest.RefusedWriter;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master that floods its worker with data calls and does not read the answers, over a real socket
 * (this test plays the master; the worker's range store and dedup engine on disk): the worker stops
 * reading (backpressure) instead of piling the answers up, does not take the paused link for a
 * silent master, and once the master reads, every answer arrives, in order and correct, and the
 * dedup and data calls that follow are answered on the same link.
 */
class WorkerLinkBackpressureTest {
    private static final int BS = ProtocolLimits.MAX_BLOCK_SIZE; // 1 MiB: a flood of 400 answers is 400 MiB
    private static final int HEARTBEAT_MILLIS = 200; // silent after 1 s
    private static final int BLOCKS = 8;
    /**
     * Four times {@link #BOUND}: a worker without backpressure piles up more than the bound in the 3 s
     * pause at any read rate above 32 MiB/s, as it did with 2,000 (which cost 1.6 GB more to read and
     * check, about 30 s of a CI run, and proved nothing more).
     */
    private static final int FLOOD = 400;
    /** What the worker may hold: the lane's bounds, plus one answer and one socket read of requests beyond them. */
    private static final long BOUND = BoundedLane.MAX_QUEUED_BYTES + BoundedLane.MAX_ANSWER_BYTES + 2L * ProtocolLimits.MAX_FRAME;

    @TempDir
    Path dir;
    private LocalDedupWorker engine;
    private WorkerRangeData data;
    private ServerSocket masterPort;
    private WorkerConnector worker;

    @BeforeEach
    void start() throws Exception {
        engine = new LocalDedupWorker(0, dir.resolve("worker"), SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC());
        data = new WorkerRangeData(dir.resolve("range-data"), new DataStore.Settings(dir.resolve("unused"), 64 << 20, FsyncPolicy.COMMIT,
                64, 0));
        masterPort = new ServerSocket(TestPorts.claim(), 8, InetAddress.getLoopbackAddress());
        Path tokenFile = Files.writeString(dir.resolve("worker.token"), "any-token\n");
        worker = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", masterPort.getLocalPort(), null, "w1", tokenFile, null,
                "auto", "test", Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(30)), new LoadProbe(dir),
                new LazyDedupWorker(0, () -> engine), data);
        worker.start();
    }

    @AfterEach
    void stop() throws Exception {
        worker.close();
        masterPort.close();
        data.close();
        engine.close();
    }

    /** The next frame that is not a heartbeat; heartbeats are answered, as a master does. */
    private static Message answer(RefusedWriter w) throws Exception {
        while (true) {
            Message m = w.read();
            if (m instanceof Heartbeat h) {
                w.send(RefusedWriter.frame(new HeartbeatAck(h.sequence())));
            } else {
                return m;
            }
        }
    }

    private static byte[] fp(byte[] raw) {
        byte[] f = new byte[32];
        BlockHasher.forCurrentThread().sha256(raw, 0, raw.length, f, 0);
        return f;
    }

    @Test
    void flood_masterNotReadingTheAnswers_workerQueueBounded_linkStays_allAnswersCorrectOnceRead() throws Exception {
        try (Socket s = masterPort.accept()) {
            RefusedWriter w = new RefusedWriter(s);
            assertThat(w.read()).isInstanceOf(Register.class);
            long first = MembershipSettings.DEFAULT_FIRST_PBN;
            w.send(RefusedWriter.frame(new Registered(1, 1, first, first + MembershipSettings.DEFAULT_RANGE_SIZE, HEARTBEAT_MILLIS,
                    "test")));
            await().atMost(Duration.ofSeconds(10)).until(() -> worker.status().connected() && worker.rangeDataService() != null);
            RangeDataService service = worker.rangeDataService();

            byte[][] blocks = new byte[BLOCKS][];
            long[] pbns = new long[BLOCKS];
            Random r = new Random(19);
            for (int i = 0; i < BLOCKS; i++) {
                blocks[i] = new byte[BS];
                r.nextBytes(blocks[i]);
                w.send(RefusedWriter.frame(new DataStoreRequest(i + 1, PayloadCodec.RAW, BS, 1, fp(blocks[i]), blocks[i])));
                Message stored = answer(w);
                assertThat(stored).isInstanceOf(DataStored.class);
                pbns[i] = ((DataStored) stored).first();
            }

            ByteArrayOutputStream flood = new ByteArrayOutputStream();
            for (int k = 0; k < FLOOD; k++) {
                flood.write(RefusedWriter.frame(new DataRead(1000 + k, 1, new long[] {pbns[k % BLOCKS]})));
            }
            Thread writer = new Thread(() -> {
                try {
                    w.send(flood.toByteArray());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "flooding-master");
            writer.setDaemon(true);
            writer.start();
            // not reading (nor acking heartbeats) for three times the worker's silence limit
            Thread.sleep(5L * HEARTBEAT_MILLIS * 3);
            long held = service.peakQueuedBytes();
            assertThat(held).as("answers waited for the master, up to the bound").isGreaterThan(BoundedLane.MAX_ANSWER_BYTES / 2)
                    .as("and no further: without backpressure the 400 MiB of answers pile up").isLessThanOrEqualTo(BOUND);
            assertThat(worker.status().connected()).as("a paused link is not a silent master").isTrue();
            assertThat(worker.rangeDataService()).as("the same link").isSameAs(service);

            for (int k = 0; k < FLOOD; k++) {
                Message m = answer(w);
                assertThat(m).isInstanceOf(DataReadAnswer.class);
                DataReadAnswer a = (DataReadAnswer) m;
                assertThat(a.requestId()).as("in order").isEqualTo(1000 + k);
                assertThat(a.count()).isEqualTo(1);
                assertThat(a.data()).as("answer " + k).isEqualTo(blocks[k % BLOCKS]);
            }
            writer.join(5_000);
            assertThat(service.peakQueuedBytes()).isLessThanOrEqualTo(BOUND);

            w.send(RefusedWriter.frame(new DedupControl(5000, DedupControl.FLUSH, 0)));
            Message done = answer(w);
            assertThat(done).as("dedup calls served after the flood").isInstanceOf(DedupDone.class);
            assertThat(((DedupDone) done).requestId()).isEqualTo(5000);
            w.send(RefusedWriter.frame(new DataSync(5001)));
            Message synced = answer(w);
            assertThat(synced).isInstanceOf(DataSynced.class);
            assertThat(((DataSynced) synced).durableBelow()).isEqualTo(pbns[BLOCKS - 1] + 1);
            assertThat(worker.rangeDataService()).as("still the same link").isSameAs(service);
        }
    }
}
