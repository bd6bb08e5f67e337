package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;
import static org.holdfast.server.ingest.cluster.RangeBlocks.blocks;
import static org.holdfast.server.ingest.cluster.RangeBlocks.fps;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.Register;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.gc.RegistrationCountsFence;
import org.holdfast.server.gc.WorkerCountsFences;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The counts mark at REGISTER (cluster version 7) over a real link (a master's cluster port and one
 * worker node in this JVM, real sockets, range store, GMA and BOSC log): after a catalog restore the
 * worker's counts are below the catalog's (a deletion after the backup, which the restored catalog
 * undid), so a sweep would free blocks the catalog references. A worker that did not import stays
 * fenced and frees nothing; once it imported counts exported after the restore its next
 * registration lifts the fence and the sweep frees only the leak. A node the registry does not know
 * (the same backup restored again) that holds counts is fenced at its first registration. A worker
 * of version 6 registers as before and its fence stays (lifted by hand).
 */
class CountsFenceAtRegisterTest {
    private static final long FIRST = OneRangeWorker.FIRST;
    private static final long DAY = 86_400_000L;
    private static final int N = 8;
    /** The lost master deleted these after the backup; the restored catalog references them again. */
    private static final int REFERENCED = 4;
    /** The restored master's GC operation counter (the restore's jump). */
    private static final long RESTORED_NEXT_OP = 1L << 32;
    private static final long FLOOR = GcDelta.deltaId(RESTORED_NEXT_OP - 1, GcDelta.MAX_PART);

    @TempDir
    Path dir;
    private final Clock clock = Clock.systemUTC();
    private final List<AuditEvent> audit = new CopyOnWriteArrayList<>();
    private TestMaster master;
    private WorkerRangeData data;
    private WorkerGcMetadata gc;
    private WorkerConnector worker;

    @AfterEach
    void stop() {
        stopWorker();
        if (master != null) {
            master.close();
        }
    }

    private void startMaster(String catalog) throws Exception {
        master = new TestMaster(dir.resolve(catalog), new MembershipSettings(Duration.ofMillis(500), Duration.ofSeconds(2),
                Duration.ofSeconds(10), FIRST, MembershipSettings.DEFAULT_RANGE_SIZE), audit::add);
        master.server.checkCountsWith(new RegistrationCountsFence(master.db)); // as a master with data=workers
        Files.writeString(dir.resolve("worker.token"), master.workerToken());
    }

    private void startWorker() {
        Path rangeData = dir.resolve("w1").resolve("range-data");
        data = new WorkerRangeData(rangeData, new DataStore.Settings(dir.resolve("unused"), 1L << 20, FsyncPolicy.COMMIT, 64, 0));
        gc = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults().withCommitters(1), Duration.ofMillis(1), clock);
        worker = new WorkerConnector(master.linkSettings("w1", dir.resolve("worker.token")), new LoadProbe(dir), null, data, gc);
        worker.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> worker.status().connected() && master.server.rangeSweeps().up(1) != null
                && master.server.gcDeltas().up(1) != null && master.server.rangeStores().up(1) != null);
    }

    private void stopWorker() {
        if (worker != null) {
            worker.close();
            data.close();
            gc.close();
            worker = null;
        }
    }

    /** The lost master's life after the backup: N blocks stored and referenced (op 1), the first ones dereferenced, expired (op 2). */
    private long[] storeThenDeleteTheReferencedOnes(byte[] raw) {
        RemoteRangeStore store = master.server.rangeStores().up(1);
        long[] pbns = new long[N];
        for (int k = 0; k < N; k++) {
            byte[] b = Arrays.copyOfRange(raw, k * BS, (k + 1) * BS);
            pbns[k] = store.store(PayloadCodec.RAW, BS, 1, fps(b), b).join();
        }
        store.sync().join();
        GcDeltaScript.commitThenDelete(master.server.gcDeltas().up(1), pbns, REFERENCED, k -> clock.millis() - DAY);
        return pbns;
    }

    /** What catalog-restore leaves for the worker: the jumped operation counter and its counts fence. */
    private void restoreCatalog() {
        try (MetadataBatch b = new MetadataBatch()) {
            master.db.putMetaLong(b, "gc.next-op-id", RESTORED_NEXT_OP);
            new WorkerCountsFences(master.db).put(b, 1, FLOOR, clock.millis());
            master.db.write(b, true);
        }
    }

    private List<WorkerSweeps.Outcome> sweep() throws InterruptedException {
        Thread.sleep(20); // the grace (1 ms) of the import passes
        return new WorkerSweeps(master.server.rangeSweeps(), () -> List.of(1L), id -> 0, WorkerSweeps.SessionHolds.NONE,
                new WorkerCountsFences(master.db)::sweepRefusal, Duration.ofSeconds(20), Duration.ZERO).sweep(clock.millis(), false);
    }

    private void assertEveryBlockReadsBack(byte[] raw, long[] pbns, int upTo) {
        List<byte[]> read = master.server.rangeStores().up(1).read(Arrays.copyOf(pbns, upTo)).join();
        for (int k = 0; k < upTo; k++) {
            assertThat(read.get(k)).as("block " + k + " byte for byte").isEqualTo(Arrays.copyOfRange(raw, k * BS, (k + 1) * BS));
        }
    }

    private List<AuditEvent> countsEvents() {
        return audit.stream().filter(e -> e.action().equals("cluster.worker.counts-fence")).toList();
    }

    @Test
    void register_notImported_staysFencedAndFreesNothing_imported_liftedAndSweepsOnlyTheLeak() throws Exception {
        startMaster("catalog");
        startWorker();
        byte[] raw = blocks(11, N, false);
        long[] pbns = storeThenDeleteTheReferencedOnes(raw);
        restoreCatalog();
        stopWorker();
        startWorker(); // registers with its stale counts, no import

        assertThat(new WorkerCountsFences(master.db).of(1)).as("no import: the fence stays").isNotNull();
        assertThat(countsEvents()).extracting(AuditEvent::result).containsExactly("keep");
        assertThat(countsEvents().get(0).detail()).contains("imported no counts");
        List<WorkerSweeps.Outcome> refused = sweep();
        assertThat(refused).extracting(WorkerSweeps.Outcome::state).containsExactly(WorkerSweeps.State.REFUSED);
        assertEveryBlockReadsBack(raw, pbns, N); // swept, the first blocks (RC 0 and expired there) would be gone

        // counts exported from the restored catalog: the first blocks referenced, the rest (a lost snapshot's) not
        stopWorker();
        Path file = dir.resolve("w1.counts");
        PbnRange range = master.registry.workers().get(0).range();
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(file, new WorkerCountsFile.Header(1, range, FLOOR, clock.millis()))) {
            for (int k = 0; k < REFERENCED; k++) {
                w.add(pbns[k], 1, 0, 0);
            }
            w.finish();
        }
        new WorkerGcImport(dir.resolve("w1").resolve("range-data"), Duration.ofMillis(1), clock, line -> { }).run(file);
        assertThat(CountsImportRecord.read(dir.resolve("w1").resolve("range-data").resolve("gc")).mark()).isEqualTo(FLOOR);
        startWorker();

        assertThat(new WorkerCountsFences(master.db).of(1)).as("lifted at registration").isNull();
        assertThat(countsEvents()).extracting(AuditEvent::result).containsExactly("keep", "lift");
        assertThat(countsEvents().get(1).detail()).isEqualTo("lifted the counts fence of worker 1: it imported counts exported at mark "
                + FLOOR);
        List<WorkerSweeps.Outcome> swept = sweep();
        assertThat(swept).extracting(WorkerSweeps.Outcome::state).containsExactly(WorkerSweeps.State.SWEPT);
        assertThat(swept.get(0).report().blocksFreed()).as("the lost snapshot's blocks only").isEqualTo(N - REFERENCED);
        assertEveryBlockReadsBack(raw, pbns, REFERENCED);
        for (int k = REFERENCED; k < N; k++) {
            long p = pbns[k];
            assertThatThrownBy(() -> master.server.rangeStores().up(1).read(new long[] {p}).join()).as("leaked block " + k + " freed")
                    .isInstanceOf(CompletionException.class);
        }
    }

    @Test
    void register_nodeWithCountsTheRegistryDoesNotKnow_fencedAtItsFirstRegistrationAndFreesNothing() throws Exception {
        startMaster("first-restored");
        startWorker();
        byte[] raw = blocks(12, N, false);
        long[] pbns = storeThenDeleteTheReferencedOnes(raw);
        stopWorker();
        master.close();
        // the same backup restored again: a registry that never heard of w1, a counter jumped past the first restore's
        startMaster("second-restored");
        try (MetadataBatch b = new MetadataBatch()) {
            master.db.putMetaLong(b, "gc.next-op-id", RESTORED_NEXT_OP);
            master.db.write(b, true);
        }
        startWorker();

        WorkerCountsFences.Fence fence = new WorkerCountsFences(master.db).of(1);
        assertThat(fence).as("counts another master's deltas kept").isNotNull();
        assertThat(fence.floor()).as("only a counts file exported from this catalog from now on lifts it").isEqualTo(FLOOR);
        assertThat(countsEvents()).extracting(AuditEvent::result).containsExactly("fence");
        assertThat(countsEvents().get(0).detail()).contains("registered here for the first time but holds GC counts");
        assertThat(sweep()).extracting(WorkerSweeps.Outcome::state).containsExactly(WorkerSweeps.State.REFUSED);
        assertEveryBlockReadsBack(raw, pbns, N);

        // what the fence kept: without it the sweep frees the blocks its stale counts say are unreferenced
        new WorkerCountsFences(master.db).clear(1);
        List<WorkerSweeps.Outcome> unfenced = sweep();
        assertThat(unfenced.get(0).report().blocksFreed()).isEqualTo(REFERENCED);
    }

    @Test
    void register_version6Worker_registeredWithoutTheCountsMark_itsFenceStaysForTheManualLift() throws Exception {
        startMaster("catalog");
        restoreCatalog();
        String token = Files.readString(dir.resolve("worker.token"));
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), master.server.port())) {
            ByteBuf frame = Unpooled.buffer();
            FrameEncoder.write(new Register(Register.REPAIR_VERSION, "w1", token, "v6", 2, 1L << 30, 1L << 40, 0), frame);
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            s.getOutputStream().write(bytes);
            DataInputStream in = new DataInputStream(s.getInputStream());
            in.readInt(); // length
            in.readUnsignedByte(); // frame version
            assertThat(in.readUnsignedByte()).as("REGISTERED").isEqualTo(MessageType.REGISTERED.code());
        }
        assertThat(new WorkerCountsFences(master.db).of(1)).as("lifted only by gc-rebuild --counts-imported").isNotNull();
        assertThat(countsEvents()).isEmpty();
    }
}
