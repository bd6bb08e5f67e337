package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.WorkerCapacity;
import org.holdfast.server.cluster.WorkerLoad;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.DamagedBlockException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.DiskSpace;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.SpaceReserve;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master's read-only copy of a worker's range from the bucket ({@link RangeCopy}), against a real
 * archiving range store on S3Proxy: raw blocks and a zstd frame read back byte for byte with their
 * fingerprints, nothing written to the bucket, a PBN past the copy unavailable; a byte flipped in the
 * frame's record in the bucket makes every member damaged and the other blocks still read; a bucket
 * without the worker's keys says so, and so does a master without a bucket ({@link RangeCopies}). A
 * takeover from the same bucket shares the copy's rule for a block repaired in a later log; a record
 * header flipped in the middle of a sealed log refuses the takeover and leaves the copy's later blocks unavailable.
 */
class RangeCopyTest {
    private static final PbnRange RANGE = new PbnRange(5_000_000, 6_000_000);
    private static final long WORKER = 4;
    /** 16 KiB: smaller than any log here, so the copy keeps none and reads by range from the bucket. */
    private static final LogCache.Settings SMALL_CACHE = new LogCache.Settings(16 << 10, 4096, false, 1, 4096);

    @TempDir
    Path tmp;
    private RangeBucket fixture;
    private ObjectStore look; // the fixture's own client of the bucket
    private long[] rawPbns;
    private long firstMember;
    private byte[] raw;
    private byte[] framed;

    @BeforeEach
    void archiveARange() throws Exception {
        fixture = RangeBucket.start(tmp);
        look = fixture.look;
        raw = RangeBlocks.blocks(1, 6, false);
        framed = RangeBlocks.blocks(2, 4, true);
        try (WorkerRangeData node = node("worker")) {
            DataStore s = node.claim(RANGE);
            rawPbns = appendRaw(s, raw);
            byte[] z = new byte[framed.length + 1024];
            try (BlockCodec codec = new BlockCodec()) {
                int n = codec.compress(framed, 0, framed.length, z, 0);
                firstMember = s.appendFrame(RangeBlocks.fps(framed), 0, 4, z, 0, n, BS);
            }
            node.sync(s); // sealed and in the bucket, as at a commit
        }
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    private RangeCopy copy() {
        return RangeCopy.materialise(WORKER, RANGE, fixture.client(), LogCache.Settings.defaults(), tmp.resolve("copy"),
                roomy());
    }

    /** The real disk of the test's directory with no reserve. */
    private SpaceReserve roomy() {
        return new SpaceReserve(DiskSpace.of(tmp), 0, tmp.toString());
    }

    private static long[] members(long first) {
        return new long[] {first, first + 1, first + 2, first + 3};
    }

    @Test
    void readBatch_copyOfAnArchivedRange_everyBlockByteForByte_nothingWrittenToTheBucket() {
        List<String> before = look.list(WorkerKeys.prefix(WORKER));
        try (RangeCopy c = copy()) {
            assertThat(c.epoch()).isEqualTo(1);
            assertReads(c, rawPbns, raw);
            assertReads(c, members(firstMember), framed);
            long beyond = firstMember + 1000;
            assertThatThrownBy(() -> c.readBatch(new long[] {beyond}, 0, 1, new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES)))
                    .isInstanceOf(BlocksUnavailableException.class).hasMessageContaining("unavailable, not absent");
            assertThat(c.built()).isTrue();
            assertThat(c.damagedBlocks()).isZero();
        }
        assertThat(look.list(WorkerKeys.prefix(WORKER))).as("no marker, no epoch, no object").isEqualTo(before);
        assertThat(tmp.resolve("copy")).as("closing deletes the copy").doesNotExist();
    }

    /** Flips a bit inside the zstd frame, the last record of the range's one log object. */
    private void flipFrameInTheBucket() throws Exception {
        String key = look.list(WorkerKeys.space(WORKER, 1) + "/logs/").get(0);
        Path f = tmp.resolve("log.hfl");
        look.download(key, f);
        byte[] log = Files.readAllBytes(f);
        log[log.length - 10] ^= 0x01;
        Files.write(f, log);
        look.delete(key);
        assertThat(look.putIfAbsent(key, f)).isTrue();
    }

    @Test
    void readBatch_frameFlippedInTheBucketAfterTheCopy_memberDamagedAtRead() throws Exception {
        // a cache smaller than the log: the copy does not keep it and reads its blocks by range from the bucket
        try (RangeCopy c = RangeCopy.materialise(WORKER, RANGE, fixture.client(), SMALL_CACHE, tmp.resolve("copy"),
                roomy())) {
            c.awaitBuilt();
            flipFrameInTheBucket();
            BlockBatch batch = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            assertThatThrownBy(() -> c.readBatch(members(firstMember), 0, 4, batch)).isInstanceOf(DamagedBlockException.class)
                    .hasMessageContaining("bucket copy of worker " + WORKER);
            assertReads(c, rawPbns, raw);
        }
    }

    @Test
    void readBatch_frameFlippedInTheBucket_everyMemberDamagedNeverReturned_theRestReads() throws Exception {
        flipFrameInTheBucket();

        try (RangeCopy c = copy()) {
            c.awaitBuilt();
            assertThat(c.damagedBlocks()).isEqualTo(4);
            BlockBatch batch = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            for (long pbn : members(firstMember)) {
                assertThatThrownBy(() -> c.readBatch(new long[] {pbn}, 0, 1, batch)).isInstanceOf(DamagedBlockException.class)
                        .hasMessageContaining("bucket copy of worker " + WORKER);
            }
            long[] mixed = {rawPbns[4], rawPbns[5], firstMember};
            assertThat(c.readBatch(mixed, 0, 3, batch)).as("the run stops before the damaged block").isEqualTo(2);
            assertReads(c, rawPbns, raw);
        }
    }

    /**
     * The worker found its frame rotten (in the bucket and on its disk), marked the members bad and a
     * backup repaired them: the repaired records are in a second log in the bucket, the rotten frame
     * stays in the first as dead bytes.
     */
    private void repairTheRottenFrameInALaterLog() throws Exception {
        flipFrameInTheBucket();
        try (Stream<Path> logs = Files.walk(tmp.resolve("worker"))) {
            for (Path f : logs.filter(p -> p.toString().endsWith(".hfl")).toList()) {
                byte[] log = Files.readAllBytes(f);
                if (log.length > 10_000) { // the sealed log with the frame (the empty active log is a header)
                    log[log.length - 10] ^= 0x01;
                    Files.write(f, log);
                }
            }
        }
        long[] members = members(firstMember);
        try (WorkerRangeData node = node("worker")) {
            DataStore s = node.claim(RANGE);
            byte[] fps = RangeBlocks.fps(framed);
            for (int k = 0; k < 4; k++) {
                long pbn = members[k];
                assertThatThrownBy(() -> s.readBatch(new long[] {pbn}, 0, 1, new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES)))
                        .as("the worker finds member %d rotten and marks it bad", k).isInstanceOf(RuntimeException.class);
                assertThat(s.repair(pbn, fps, k * 32, framed, k * BS, BS, FormatVersions.CODEC_RAW, BS)).isTrue();
            }
            node.sync(s); // the repairs' log in the bucket
        }
        assertThat(look.list(WorkerKeys.space(WORKER, 1) + "/logs/")).hasSize(2);
    }

    /** A node on an empty disk that takes worker {@link #WORKER}'s range over from the bucket. */
    private WorkerRangeData taker() {
        return node("taker");
    }

    /** Worker {@link #WORKER}'s node on {@code tmp/<name>}, archiving to the bucket. */
    private WorkerRangeData node(String name) {
        WorkerRangeData node = fixture.node(name, Duration.ofSeconds(10));
        node.identify(WORKER);
        return node;
    }

    /** The takeover shares the copy's rule: a repaired block is adopted from its repair, not a reason to refuse. */
    @Test
    void takeover_blocksRepairedInALaterLog_adoptedFromTheRepair_everyBlockReadsBack() throws Exception {
        repairTheRottenFrameInALaterLog();
        try (WorkerRangeData node = taker()) {
            DataStore s = node.claim(RANGE);
            assertThat(node.epoch()).isEqualTo(2);
            assertReads(s::readBatch, members(firstMember), framed);
            assertReads(s::readBatch, rawPbns, raw);
        }
    }

    /** A rotten record with no good copy anywhere: adopting would lose its blocks, so the takeover refuses naming them. */
    @Test
    void takeover_frameRottenWithoutARepair_refusedNamingItsPbns_noStoreMade() throws Exception {
        flipFrameInTheBucket();
        try (WorkerRangeData node = taker()) {
            assertThatThrownBy(() -> node.claim(RANGE)).hasMessageContaining("4 blocks of worker " + WORKER + "'s adopted logs fail their check")
                    .hasMessageContaining("PBNs " + firstMember + ", " + (firstMember + 1) + ", " + (firstMember + 2) + ", " + (firstMember + 3) + ";")
                    .hasMessageContaining("nothing was taken over").hasMessageContaining("Put a good copy of that log object back");
        }
        try (Stream<Path> files = Files.walk(tmp.resolve("taker"))) {
            assertThat(files.filter(p -> p.toString().endsWith(".hfl")).toList()).as("no store made, no log written").isEmpty();
        }
    }

    /**
     * Flips a bit of the PBN in the header of the third raw block's record, in the middle of the
     * range's one log object (bit rot in the bucket); returns {object key, record offset, log size}.
     */
    private String[] flipThirdRecordHeaderInTheBucket() throws Exception {
        String key = look.list(WorkerKeys.space(WORKER, 1) + "/logs/").get(0);
        Path f = tmp.resolve("log.hfl");
        look.download(key, f);
        byte[] log = Files.readAllBytes(f);
        int at = indexOf(log, Arrays.copyOfRange(raw, 2 * BS, 3 * BS)) - FormatVersions.RECORD_HEADER_BYTES;
        assertThat(at).as("the third record lies in the middle of the log").isGreaterThan(FormatVersions.DATA_LOG_HEADER_BYTES)
                .isLessThan(log.length / 2);
        log[at + 8] ^= 0x01;
        Files.write(f, log);
        look.delete(key);
        assertThat(look.putIfAbsent(key, f)).isTrue();
        return new String[] {key, Integer.toString(at), Integer.toString(log.length)};
    }

    private static int indexOf(byte[] in, byte[] what) {
        for (int i = 0; i + what.length <= in.length; i++) {
            if (Arrays.equals(in, i, i + what.length, what, 0, what.length)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * A damaged record header in the middle of a sealed log hides every record after it; a sealed log
     * has no torn tail, so the takeover refuses instead of adopting the range without those blocks.
     */
    @Test
    void takeover_recordHeaderRottenInTheMiddleOfASealedLog_refusedNamingLogAndOffset_noStoreMade() throws Exception {
        String[] flipped = flipThirdRecordHeaderInTheBucket();
        long unread = Long.parseLong(flipped[2]) - Long.parseLong(flipped[1]);
        try (WorkerRangeData node = taker()) {
            assertThatThrownBy(() -> node.claim(RANGE)).hasMessageContaining(flipped[0])
                    .hasMessageContaining("no whole, checksummed record at offset " + flipped[1])
                    .hasMessageContaining("its " + unread + " bytes from there to the end")
                    .hasMessageContaining("nothing was taken over").hasMessageContaining("Put a good copy of that log object back");
        }
        try (Stream<Path> files = Files.walk(tmp.resolve("taker"))) {
            assertThat(files.filter(p -> p.toString().endsWith(".hfl")).toList()).as("no store made, no log written").isEmpty();
        }
    }

    /** The read-only copy serves the records before the damaged header; those after it are unavailable, not absent. */
    @Test
    void readBatch_recordHeaderRottenInTheMiddleOfASealedLog_earlierBlocksRead_laterUnavailable() throws Exception {
        flipThirdRecordHeaderInTheBucket();
        try (RangeCopy c = copy()) {
            assertReads(c, Arrays.copyOf(rawPbns, 2), Arrays.copyOf(raw, 2 * BS));
            BlockBatch batch = new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            for (long pbn : new long[] {rawPbns[2], rawPbns[5], firstMember}) {
                assertThatThrownBy(() -> c.readBatch(new long[] {pbn}, 0, 1, batch)).isInstanceOf(BlocksUnavailableException.class);
            }
        }
    }

    /**
     * The worker found its frame rotten (in the bucket and on its disk), marked the members bad and a
     * backup repaired them: the repaired records are in a later log in the bucket. The copy serves the
     * repaired blocks, as the worker did, instead of calling them damaged for the dead frame's sake.
     */
    @Test
    void readBatch_blocksRepairedInALaterLog_readFromTheRepair_notDamagedByTheDeadFrame() throws Exception {
        repairTheRottenFrameInALaterLog();
        long[] members = members(firstMember);

        try (RangeCopy c = copy()) {
            assertReads(c, members, framed);
            c.awaitBuilt();
            assertThat(c.damagedBlocks()).as("a repaired block is not damaged").isZero();
            assertReads(c, rawPbns, raw);
        }
    }

    /** The copy lives on the master's data disk, beside its catalog: it must not take that disk below the reserve. */
    @Test
    void materialise_masterDiskAtItsReserve_refusedSayingSo_nothingLeftNothingWrittenToTheBucket() throws Exception {
        List<String> before = look.list(WorkerKeys.prefix(WORKER));
        long free = Files.getFileStore(tmp).getUsableSpace();
        SpaceReserve full = new SpaceReserve(DiskSpace.of(tmp), free + (1L << 30), tmp.toString());
        assertThatThrownBy(() -> RangeCopy.materialise(WORKER, RANGE, fixture.client(), LogCache.Settings.defaults(),
                tmp.resolve("copy"), full)).isInstanceOf(BlocksUnavailableException.class)
                .hasMessageContaining("before it took the master's data disk below its reserve").hasMessageContaining("holdfast.store.min-free-space");
        assertThat(tmp.resolve("copy")).doesNotExist();
        assertThat(look.list(WorkerKeys.prefix(WORKER))).isEqualTo(before);
    }

    @Test
    void materialise_bucketWithoutTheWorker_saysSoAndLeavesNothing() {
        assertThatThrownBy(() -> RangeCopy.materialise(WORKER + 1, new PbnRange(7_000_000, 8_000_000), fixture.client(),
                LogCache.Settings.defaults(), tmp.resolve("none"), roomy())).isInstanceOf(BlocksUnavailableException.class)
                .hasMessageContaining("holds no object of worker " + (WORKER + 1)).hasMessageContaining("holdfast.store.s3.bucket");
        assertThat(tmp.resolve("none")).doesNotExist();
    }

    @Test
    void readBatch_lostWorkerOnAMasterWithoutBucket_errorNamesTheWorkerAndTheSettingsToSet() {
        WorkerView lost = new WorkerView(WORKER, "gone-1", "127.0.0.9", MemberState.LOST, 2, RANGE, 0, WorkerLoad.NONE,
                new WorkerCapacity(1, 0, 0), "", "", Long.MAX_VALUE);
        RangeStores stores = new RangeStores();
        try (RangeCopies copies = new RangeCopies(stores, () -> List.of(lost), null, tmp.resolve(RangeCopies.DIRECTORY), roomy(), Duration.ZERO,
                System::nanoTime)) {
            BlockBatch batch = new BlockBatch(4, 1 << 16, FormatVersions.MAX_STORED_BYTES);
            assertThatThrownBy(() -> new WorkerBlockHome(stores, copies).readBatch(rawPbns, 0, 1, batch))
                    .isInstanceOf(BlocksUnavailableException.class).hasMessageContaining("gone-1")
                    .hasMessageContaining("holdfast.store.backend=s3").hasMessageContaining("Restore while a worker is dead");
            assertThat(copies.copied()).isEmpty();
        }
    }

    /**
     * A worker whose link dropped a moment ago (or that has not reconnected since the master started)
     * may be back in seconds: its whole range is not downloaded for it. Once it has been away
     * lost-after, its blocks are read from the copy.
     */
    @Test
    void readBatch_workerAwayLessThanLostAfter_unavailableWithoutACopy_thenReadFromTheCopy() {
        // the master's monotonic clock, in ms; the worker was last heard at 999_000 (the wall clock plays no part)
        AtomicLong now = new AtomicLong(1_000_000);
        java.util.function.LongSupplier nanoTime = () -> now.get() * 1_000_000L;
        java.util.function.Supplier<WorkerView> away = () -> new WorkerView(WORKER, "blip-1", "127.0.0.9", MemberState.LOST, 2, RANGE,
                4_000, WorkerLoad.NONE, new WorkerCapacity(1, 0, 0), "", "", (now.get() - 999_000) * 1_000_000L);
        RangeStores stores = new RangeStores();
        WorkerRangeData.Archive bucket = new WorkerRangeData.Archive(fixture::client, LogCache.Settings.defaults(),
                Duration.ofSeconds(10));
        try (RangeCopies copies = new RangeCopies(stores, () -> List.of(away.get()), bucket, tmp.resolve(RangeCopies.DIRECTORY),
                roomy(), Duration.ofSeconds(15), nanoTime)) {
            WorkerBlockHome home = new WorkerBlockHome(stores, copies);
            BlockBatch batch = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            assertThatThrownBy(() -> home.readBatch(rawPbns, 0, rawPbns.length, batch)).isInstanceOf(BlocksUnavailableException.class)
                    .hasMessageContaining("blip-1").hasMessageContaining("holdfast.cluster.lost-after");
            assertThat(copies.copied()).as("no copy for a worker away a second").isEmpty();
            assertThat(tmp.resolve(RangeCopies.DIRECTORY).resolve("w" + WORKER)).doesNotExist();

            now.addAndGet(15_000);
            assertThat(home.readBatch(rawPbns, 0, rawPbns.length, batch)).isEqualTo(rawPbns.length);
            assertThat(copies.copied()).containsExactly(WORKER);
        }
    }

    /**
     * While a lost worker's range copy is still building, a block it has not indexed yet is pending
     * (what the image API answers 503 with Retry-After for, before any body byte) with the copy's
     * progress; a block it has indexed, and every block once built, reads at once.
     */
    @Test
    void copyPending_blockOfALogNotIndexedYet_pendingWithProgress_indexedOnesAndAllOnceBuiltAreNot() throws Exception {
        long[] later = secondLog(RangeBlocks.blocks(3, 2, false));
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger buildCalls = new java.util.concurrent.atomic.AtomicInteger();
        DiskSpace real = DiskSpace.of(tmp);
        // the build asks the disk when it keeps a downloaded log, then after indexing it: hold it at that second
        // question, so the first log is indexed and the second is not
        DiskSpace holding = new DiskSpace() {
            @Override
            public long usableBytes() throws java.io.IOException {
                if (Thread.currentThread().getName().startsWith("range-copy-w") && buildCalls.incrementAndGet() == 2) {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return real.usableBytes();
            }

            @Override
            public String describe() {
                return real.describe();
            }
        };
        WorkerView lost = new WorkerView(WORKER, "gone-2", "127.0.0.9", MemberState.LOST, 2, RANGE, 0, WorkerLoad.NONE,
                new WorkerCapacity(1, 0, 0), "", "", Long.MAX_VALUE);
        RangeStores stores = new RangeStores();
        WorkerRangeData.Archive bucket = new WorkerRangeData.Archive(fixture::client, LogCache.Settings.defaults(),
                Duration.ofSeconds(10));
        try (RangeCopies copies = new RangeCopies(stores, () -> List.of(lost), bucket, tmp.resolve(RangeCopies.DIRECTORY),
                new SpaceReserve(holding, 0, tmp.toString()), Duration.ZERO, System::nanoTime)) {
            WorkerBlockHome home = new WorkerBlockHome(stores, copies);
            try {
                assertThat(home.copyPending(later[0])).as("the first ask starts the copy: its logs are not indexed yet").isNotNull();
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> buildCalls.get() >= 2);
                RangeCopy.Progress p = home.copyPending(later[0]);
                assertThat(p).as("a block of the log not indexed yet").isNotNull();
                assertThat(p.worker()).isEqualTo(WORKER);
                assertThat(p.logsDone()).isEqualTo(1);
                assertThat(p.logsTotal()).isEqualTo(2);
                assertThat(p.bytesDone()).isPositive();
                assertThat(p.secondsLeft()).isNotNegative();
                assertThat(home.copyPending(rawPbns[0])).as("a block of the indexed log reads now").isNull();
                BlockBatch batch = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
                assertThat(home.readBatch(rawPbns, 0, 1, batch)).isEqualTo(1);
            } finally {
                release.countDown();
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> home.copyPending(later[0]) == null);
            BlockBatch batch = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            assertThat(home.readBatch(later, 0, later.length, batch)).isEqualTo(later.length);
        }
    }

    /** Stores {@code blocks} raw in a second sealed log in the bucket; returns their PBNs. */
    private long[] secondLog(byte[] blocks) {
        long[] pbns;
        try (WorkerRangeData node = node("worker")) {
            DataStore s = node.claim(RANGE);
            pbns = appendRaw(s, blocks);
            node.sync(s);
        }
        assertThat(look.list(WorkerKeys.space(WORKER, 1) + "/logs/")).hasSize(2);
        return pbns;
    }

    /** Appends each block of {@code blocks} raw to {@code s}; returns their PBNs. */
    private static long[] appendRaw(DataStore s, byte[] blocks) {
        byte[] fps = RangeBlocks.fps(blocks);
        long[] pbns = new long[blocks.length / BS];
        for (int k = 0; k < pbns.length; k++) {
            pbns[k] = s.append(fps, k * 32, blocks, k * BS, BS, FormatVersions.CODEC_RAW, BS);
        }
        return pbns;
    }

    /** A copy over {@code bucket} whose second download waits for the test, with the default cache. */
    private RangeCopy copy(GatedDownloadStore bucket) {
        return RangeCopy.materialise(WORKER, RANGE, bucket, LogCache.Settings.defaults(), tmp.resolve("copy"), roomy());
    }

    /** Reads one PBN on another thread (a restore waiting on the build). */
    private static CompletableFuture<BlockBatch> readLater(RangeCopy c, long pbn) {
        return CompletableFuture.supplyAsync(() -> {
            BlockBatch b = new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            c.readBatch(new long[] {pbn}, 0, 1, b);
            return b;
        });
    }

    /**
     * The first read does not wait for the whole range: a block of the first log reads while the second
     * is still being downloaded; a block of the second, and one the copy never holds, wait for it.
     * Kept logs are read from the copy's disk: no ranged GET of a log downloaded once.
     */
    @Test
    void readBatch_blockOfTheFirstLog_readsBeforeTheLastLogIsIndexed_laterOnesWaitForTheirLog() throws Exception {
        byte[] more = RangeBlocks.blocks(3, 6, false);
        long[] later = secondLog(more);
        GatedDownloadStore bucket = new GatedDownloadStore(fixture.client(), 2);
        try (RangeCopy c = copy(bucket)) {
            assertReads(c, rawPbns, raw); // returns with the second log's download held at the gate
            bucket.awaitHeld();
            assertThat(c.built()).isFalse();
            CompletableFuture<BlockBatch> second = readLater(c, later[0]);
            CompletableFuture<BlockBatch> never = readLater(c, firstMember + 1000);
            assertThat(second).as("a block of the held log waits for it").isNotDone();
            assertThat(never).as("a PBN not found waits for the end before it is unavailable").isNotDone();

            bucket.open();
            assertThat(second.get(30, TimeUnit.SECONDS).count()).isEqualTo(1);
            assertThatThrownBy(() -> never.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(BlocksUnavailableException.class)
                    .hasMessageContaining("unavailable, not absent");
            assertReads(c, later, more);
            assertReads(c, members(firstMember), framed);
            assertThat(bucket.ranges()).as("both logs kept on the copy's disk: no second transfer").isZero();
        }
        assertThat(tmp.resolve("copy")).doesNotExist();
    }

    /** Logs beyond the cache size are not kept: their blocks are read by range from the bucket, checked as ever. */
    @Test
    void readBatch_logsBeyondTheCacheSize_readByRangeFromTheBucket() {
        GatedDownloadStore bucket = new GatedDownloadStore(fixture.client(), Integer.MAX_VALUE);
        try (RangeCopy c = RangeCopy.materialise(WORKER, RANGE, bucket, SMALL_CACHE, tmp.resolve("copy"), roomy())) {
            assertReads(c, rawPbns, raw);
            assertReads(c, members(firstMember), framed);
            assertThat(bucket.ranges()).as("the log was larger than the cache: read again by range").isPositive();
        }
    }

    /**
     * Damaged in the first log, repaired in the second: while the second is held the damaged PBN waits
     * (neither damaged nor returned), a good block of the first log reads; then the repair is served.
     */
    @Test
    void readBatch_damagedBlockRepairedInTheHeldLog_waitsThenReadsTheRepair() throws Exception {
        repairTheRottenFrameInALaterLog();
        GatedDownloadStore bucket = new GatedDownloadStore(fixture.client(), 2);
        try (RangeCopy c = copy(bucket)) {
            assertReads(c, rawPbns, raw);
            CompletableFuture<BlockBatch> repaired = readLater(c, firstMember);
            assertThat(repaired).as("seen only damaged so far: waits for the end of the build").isNotDone();

            bucket.open();
            BlockBatch b = repaired.get(30, TimeUnit.SECONDS);
            byte[] out = new byte[BS];
            try (BlockCodec codec = new BlockCodec()) {
                b.decode(0, codec, out, 0);
            }
            assertThat(out).isEqualTo(Arrays.copyOfRange(framed, 0, BS));
            assertReads(c, members(firstMember), framed);
        }
    }

    /** Damaged in the first log and in no later one: damaged once the build ends, its bytes never returned. */
    @Test
    void readBatch_damagedBlockNotRepairedInTheHeldLog_damagedAtTheEnd_neverReturned() throws Exception {
        flipFrameInTheBucket();
        byte[] more = RangeBlocks.blocks(5, 6, false);
        long[] later = secondLog(more);
        GatedDownloadStore bucket = new GatedDownloadStore(fixture.client(), 2);
        try (RangeCopy c = copy(bucket)) {
            assertReads(c, rawPbns, raw);
            CompletableFuture<BlockBatch> rotten = readLater(c, firstMember + 2);
            assertThat(rotten).isNotDone();

            bucket.open();
            assertThatThrownBy(() -> rotten.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(DamagedBlockException.class);
            assertThat(c.damagedBlocks()).isEqualTo(4);
            assertReads(c, later, more);
            long[] mixed = {rawPbns[5], firstMember};
            BlockBatch batch = new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            assertThat(c.readBatch(mixed, 0, 2, batch)).as("the run stops before the damaged block").isEqualTo(1);
        }
    }

    /** A build that fails half way fails the read waiting on it saying why, and deletes the copy at once. */
    @Test
    void readBatch_buildFailsAtTheSecondLog_waitingReadFailsSayingWhy_copyDeleted() throws Exception {
        long[] later = secondLog(RangeBlocks.blocks(9, 6, false));
        GatedDownloadStore bucket = new GatedDownloadStore(fixture.client(), 2);
        try (RangeCopy c = copy(bucket)) {
            assertReads(c, rawPbns, raw);
            CompletableFuture<BlockBatch> waiting = readLater(c, later[0]);
            bucket.fail();
            assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(BlocksUnavailableException.class)
                    .hasMessageContaining("could not be made").hasMessageContaining("the test's bucket went away")
                    .hasMessageContaining("the next read starts a new copy");
            c.awaitBuilt();
            assertThat(c.failed()).isTrue();
            assertThat(tmp.resolve("copy")).as("deleted once the build failed").doesNotExist();
            BlockBatch batch = new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            assertThatThrownBy(() -> c.readBatch(rawPbns, 0, 1, batch)).as("not even the first log's blocks: the copy is gone")
                    .isInstanceOf(BlocksUnavailableException.class).hasMessageContaining("could not be made");
        }
    }

    /**
     * Closing while the build is held fails the waiting read at once; close returns once the build has
     * stopped after the log it was at, with the copy deleted.
     */
    @Test
    void close_whileTheBuildIsHeld_waitingReadFailsAtOnce_closeReturnsWithTheCopyDeleted() throws Exception {
        secondLog(RangeBlocks.blocks(7, 6, false));
        GatedDownloadStore bucket = new GatedDownloadStore(fixture.client(), 2);
        RangeCopy c = copy(bucket);
        CompletableFuture<BlockBatch> waiting = readLater(c, firstMember + 1000);
        bucket.awaitHeld();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(c::close);
        assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(BlocksUnavailableException.class)
                .hasMessageContaining("dropped");
        assertThat(closing).as("waits for the held download").isNotDone();
        bucket.open();
        closing.get(30, TimeUnit.SECONDS);
        assertThat(tmp.resolve("copy")).as("deleted when close returns").doesNotExist();
        assertThat(c.built()).isFalse();
    }

    /** Reads {@code pbns} through the copy in one batch and checks each block's bytes and fingerprint against {@code expected}. */
    private static void assertReads(RangeCopy c, long[] pbns, byte[] expected) {
        assertReads(c::readBatch, pbns, expected);
    }

    /** Reads a batch as {@link RangeCopy#readBatch} and {@link DataStore#readBatch} do. */
    private interface BatchReader {
        int readBatch(long[] pbns, int from, int n, BlockBatch into);
    }

    private static void assertReads(BatchReader c, long[] pbns, byte[] expected) {
        BlockBatch b = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
        byte[] fps = RangeBlocks.fps(expected);
        byte[] out = new byte[BS];
        assertThat(c.readBatch(pbns, 0, pbns.length, b)).isEqualTo(pbns.length);
        try (BlockCodec codec = new BlockCodec()) {
            for (int k = 0; k < pbns.length; k++) {
                b.decode(k, codec, out, 0);
                assertThat(out).as("PBN " + pbns[k]).isEqualTo(Arrays.copyOfRange(expected, k * BS, (k + 1) * BS));
                assertThat(Arrays.copyOfRange(b.fingerprints(), b.fingerprintOffset(k), b.fingerprintOffset(k) + 32))
                        .isEqualTo(Arrays.copyOfRange(fps, k * 32, k * 32 + 32));
            }
        }
    }
}
