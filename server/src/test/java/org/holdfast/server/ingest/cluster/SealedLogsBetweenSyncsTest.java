package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.RefusedWriter.frame;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.common.protocol.SealedLogsPush;
import org.holdfast.common.protocol.SealedLogsRecorded;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.DiskSpace;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.SpaceReserve;
import org.holdfast.server.store.WorkerKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sealed-log reports between syncs (cluster version 8, SEALED_LOGS) on a real link: a master's cluster
 * port recording into its catalog (real RocksDB), a worker whose range data archives to S3Proxy. A log
 * sealed and uploaded after the worker's last DATA_SYNCED is recorded without another sync, and once the
 * worker is gone the master's copy of its range serves that log's blocks bit for bit; one uploaded while
 * the link was down is recorded by the next link's first report (nothing persisted). Forged reports
 * (another worker's records, an oversized count, a version 7 link, a second report before the first is
 * acknowledged) change nothing.
 */
class SealedLogsBetweenSyncsTest {
    @TempDir
    Path tmp;
    private RangeBucket bucket;
    private TestMaster master;
    private SealedLogStore records;
    private Path tokenFile;

    @BeforeEach
    void start() throws Exception {
        master = new TestMaster(tmp.resolve("catalog"), new MembershipSettings(Duration.ofMillis(100), Duration.ofSeconds(2),
                Duration.ofSeconds(10), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE);
        records = new SealedLogStore(master.db);
        master.server.recordSealedLogs(records::apply);
        tokenFile = Files.writeString(tmp.resolve("worker.token"), master.workerToken());
    }

    @AfterEach
    void stop() throws Exception {
        master.close();
        if (bucket != null) {
            bucket.close();
        }
    }

    /** S3Proxy, started by the tests that archive (the forged-report ones need none). */
    private RangeBucket bucket() throws Exception {
        if (bucket == null) {
            bucket = RangeBucket.start(tmp);
        }
        return bucket;
    }

    @Test
    void logUploadedAfterTheLastSync_recordedWithoutAnotherSync_copyOfTheLostWorkerServesItBitForBit() throws Exception {
        byte[] first = RangeBlocks.blocks(61, 3, false);
        byte[] second = RangeBlocks.blocks(62, 2, false);
        long[] firstPbns;
        long[] secondPbns;
        RemoteRangeStore rs;
        WorkerRangeData data = bucket().node("w1", Duration.ofSeconds(10));
        try (WorkerConnector w = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(tmp), null, data)) {
            w.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> master.server.rangeStores().up(1) != null);
            rs = master.server.rangeStores().up(1);
            firstPbns = store(rs, first);
            rs.sync().join();
            assertThat(records.forWorker(1).keys()).as("recorded by the sync").hasSize(1);

            secondPbns = store(rs, second);
            data.store().sealActiveLog(); // sealed and uploaded with no DATA_SYNC: as a sync that timed out, uploaded later
            await().atMost(Duration.ofSeconds(10)).until(() -> records.forWorker(1).keys().size() == 2);
        }
        data.close(); // the worker is gone, with no sync since the second log

        SealedLogs sealed = records.forWorker(1);
        assertThat(bucket.look.list(WorkerKeys.prefix(1)).stream().filter(k -> k.contains("/logs/")).toList())
                .as("both logs are in the bucket, both recorded").containsExactlyInAnyOrderElementsOf(sealed.keys());
        try (RangeCopy c = RangeCopy.materialise(1, rs.range(), bucket.client(), LogCache.Settings.defaults(), tmp.resolve("copy"),
                new SpaceReserve(DiskSpace.of(tmp), 0, tmp.toString()), sealed)) {
            c.awaitBuilt();
            assertThat(c.logProblems()).isEmpty();
            RangeBlocks.assertCopyReads(c, firstPbns, first);
            RangeBlocks.assertCopyReads(c, secondPbns, second);
        }
    }

    @Test
    void logUploadedWhileTheLinkWasDown_recordedByTheNextLinksFirstReport() throws Exception {
        WorkerRangeData data = bucket().node("w1", Duration.ofSeconds(10));
        try (WorkerConnector w = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(tmp), null, data)) {
            w.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> master.server.rangeStores().up(1) != null);
            store(master.server.rangeStores().up(1), RangeBlocks.blocks(63, 2, false));
        }
        // the link is down (a master restart, a network cut): the store seals and uploads, and nobody hears of it
        data.store().sealActiveLog();
        data.store().archive().awaitUploads(10_000);
        assertThat(records.forWorker(1).keys()).as("the first link's full report named no log").isEmpty();
        try (WorkerConnector again = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(tmp), null, data)) {
            again.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> records.forWorker(1).keys().size() == 1);
        }
        assertThat(records.forWorker(1).keys()).containsExactlyElementsOf(bucket.look.list(WorkerKeys.prefix(1)).stream()
                .filter(k -> k.contains("/logs/")).toList());
    }

    @Test
    void forgedReports_otherWorkersRecordsOversizedOrOnAVersionSevenLink_changeNothing() throws Exception {
        SealedLogReport.Sealed honest = new SealedLogReport.Sealed(1, 1, 5, 4096, new byte[32]);
        SealedLogReport.Sealed planted = new SealedLogReport.Sealed(1, 9, 6, 8192, new byte[32]);
        long victim;
        try (Socket v = register(Register.SYNC_REPORT_VERSION, "victim")) {
            victim = ((Registered) next(v)).workerId();
            send(v, new SealedLogsPush(1, new SealedLogReport(true, List.of(honest), List.of(), 0)));
            assertThat(nextOf(v, SealedLogsRecorded.class)).isEqualTo(new SealedLogsRecorded(1));
        }
        SealedLogs before = records.forWorker(victim);
        assertThat(before.keys()).hasSize(1);

        try (Socket f = register(Register.SYNC_REPORT_VERSION, "forger")) {
            long forger = ((Registered) next(f)).workerId();
            // a full report of log 1 at another epoch: it can only ever name the forger's own records
            send(f, new SealedLogsPush(7, new SealedLogReport(true, List.of(planted), List.of(), 0)));
            assertThat(nextOf(f, SealedLogsRecorded.class)).isEqualTo(new SealedLogsRecorded(7));
            assertThat(records.forWorker(forger).keys()).singleElement().asString().contains("/w" + forger + "/");
            // a count over the limit: refused as the frame is read, nothing recorded
            byte[] oversized = frame(new SealedLogsPush(8, new SealedLogReport(false, List.of(), List.of(), 0)));
            ByteBuffer.wrap(oversized).putInt(6 + 8 + 1 + 4, SealedLogReport.MAX_LOGS + 1);
            f.getOutputStream().write(oversized);
            f.getOutputStream().flush();
            assertThat(nextOf(f, ErrorMessage.class)).satisfies(e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
                assertThat(e.message()).contains("SEALED_LOGS sealed-log count 65537 is over its limit 65536");
            });
            assertThat(records.forWorker(forger).keys()).as("as before the oversized frame").hasSize(1);
        }
        try (Socket old = register(Register.SYNC_REPORT_VERSION - 1, "old")) {
            long id = ((Registered) next(old)).workerId();
            send(old, new SealedLogsPush(1, new SealedLogReport(true, List.of(honest), List.of(), 0)));
            assertThat(nextOf(old, ErrorMessage.class)).satisfies(e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("SEALED_LOGS on a link registered at cluster version 7 (it needs 8); nothing was recorded");
            });
            assertThat(records.forWorker(id).recorded()).isFalse();
        }
        assertThat(records.forWorker(victim).keys()).as("the victim's record, as it reported it").isEqualTo(before.keys());
    }

    @Test
    void secondReportBeforeTheFirstIsAcknowledged_refused_onlyTheFirstRecorded() throws Exception {
        java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
        master.server.recordSealedLogs((w, r) -> {
            try {
                hold.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            records.apply(w, r);
        });
        SealedLogReport.Sealed one = new SealedLogReport.Sealed(1, 1, 5, 4096, new byte[32]);
        SealedLogReport.Sealed two = new SealedLogReport.Sealed(2, 1, 6, 4096, new byte[32]);
        long id;
        try (Socket s = register(Register.SYNC_REPORT_VERSION, "flood")) {
            id = ((Registered) next(s)).workerId();
            send(s, new SealedLogsPush(1, new SealedLogReport(true, List.of(one), List.of(), 0)));
            send(s, new SealedLogsPush(2, new SealedLogReport(false, List.of(two), List.of(), 0)));
            assertThat(nextOf(s, ErrorMessage.class)).satisfies(e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("SEALED_LOGS 2 before the previous one was acknowledged");
            });
        } finally {
            hold.countDown();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> records.forWorker(id).recorded());
        Thread.sleep(200); // a second record, if one were queued, would land now
        assertThat(records.forWorker(id).keys()).as("the first report only").containsExactly(WorkerKeys.logKey(id, 1, 1, 5));
    }

    private static long[] store(RemoteRangeStore rs, byte[] blocks) {
        byte[] fps = RangeBlocks.fps(blocks);
        long[] pbns = new long[blocks.length / RangeBlocks.BS];
        for (int k = 0; k < pbns.length; k++) {
            pbns[k] = rs.store(PayloadCodec.RAW, RangeBlocks.BS, 1, java.util.Arrays.copyOfRange(fps, k * 32, k * 32 + 32),
                    java.util.Arrays.copyOfRange(blocks, k * RangeBlocks.BS, (k + 1) * RangeBlocks.BS)).join();
        }
        return pbns;
    }

    /** A socket that sent REGISTER at {@code version} as node {@code node}. */
    private Socket register(int version, String node) throws Exception {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", master.server.port()), 5000);
        s.setSoTimeout(10_000);
        send(s, new Register(version, node, Files.readString(tokenFile), "test", 2, 1L << 30, 1L << 40));
        return s;
    }

    private static void send(Socket s, Message m) throws Exception {
        OutputStream out = s.getOutputStream();
        out.write(frame(m));
        out.flush();
    }

    private static Message next(Socket s) throws Exception {
        List<Message> one = ClusterFrames.read(s.getInputStream(), 1);
        return one.isEmpty() ? null : one.get(0);
    }

    /** The next frame of {@code type} the master sends (heartbeat acks skipped); fails if the link closes first. */
    private static <T extends Message> T nextOf(Socket s, Class<T> type) throws Exception {
        for (Message m = next(s); m != null; m = next(s)) {
            if (type.isInstance(m)) {
                return type.cast(m);
            }
        }
        throw new AssertionError("the master closed the link before sending a " + type.getSimpleName());
    }
}
