package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;

import io.netty.channel.embedded.EmbeddedChannel;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.GcDeltaFailed;
import org.holdfast.common.protocol.GcGuardFailed;
import org.holdfast.common.protocol.GcProtect;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.gc.WorkerFsck;
import org.holdfast.server.gc.WorkerFsckReport;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.RangeTakenOverException;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.holdfast.server.store.object.SlowDownProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's range store with an object store (S3Proxy): its sealed logs go under its worker id and
 * epoch, a sync waits until they are in the bucket, and a node on an empty directory takes the range
 * over at the next epoch from the bucket alone, reading every block back byte for byte.
 */
class WorkerRangeTakeoverTest {
    private static final PbnRange RANGE = new PbnRange(1_000_000, 2_000_000);
    private static final long WORKER = 3;

    @TempDir
    Path tmp;
    private RangeBucket bucket;
    private S3ProxyFixture s3;
    private ObjectStore look;

    @BeforeEach
    void start() throws Exception {
        bucket = RangeBucket.start(tmp);
        s3 = bucket.s3;
        look = bucket.look;
    }

    @AfterEach
    void stop() throws Exception {
        bucket.close();
    }

    private WorkerRangeData node(String name, Duration stall) {
        WorkerRangeData d = bucket.node(name, stall);
        d.identify(WORKER);
        return d;
    }

    private WorkerRangeData node(String name) {
        return node(name, Duration.ofSeconds(10));
    }

    /** Appends {@code raw}'s blocks one by one (zstd where it pays), returning their PBNs. */
    /**
     * Node "a" with blocks of {@code seed} stored and synced to the bucket; while it was away (silent,
     * never restarted) another node took the range over at epoch 2; then a's link registers again.
     */
    private WorkerRangeData nodeTakenOverWhileAway(int seed) {
        WorkerRangeData a = node("a");
        DataStore sa = a.claim(RANGE);
        append(sa, RangeBlocks.blocks(seed, 4, false));
        a.sync(sa);
        RangeTakeover.claim(RangeTakeover.plan(WORKER, look), look, tmp.resolve("scratch"));
        a.identify(WORKER);
        return a;
    }

    /** The GC metadata beside node {@code name}'s range store. */
    private WorkerGcMetadata gcMetadata(String name) {
        return new WorkerGcMetadata(tmp.resolve(name).resolve(WorkerRangeData.DIRECTORY).resolve("gc"),
                BoscSettings.defaults().withCommitters(1));
    }

    private static long[] append(DataStore s, byte[] raw) {
        byte[] fps = RangeBlocks.fps(raw);
        long[] pbns = new long[raw.length / BS];
        byte[] z = new byte[BS + 64];
        try (BlockCodec codec = new BlockCodec()) {
            for (int k = 0; k < pbns.length; k++) {
                int n = codec.compress(raw, k * BS, BS, z, 0);
                pbns[k] = n < 0 ? s.append(fps, k * 32, raw, k * BS, BS, FormatVersions.CODEC_RAW, BS)
                        : s.append(fps, k * 32, z, 0, n, FormatVersions.CODEC_ZSTD, BS);
            }
        }
        return pbns;
    }

    /** Appends {@code raw}'s blocks as one zstd frame, returning their PBNs. */
    private static long[] appendFrame(DataStore s, byte[] raw) {
        byte[] fps = RangeBlocks.fps(raw);
        byte[] z = new byte[raw.length + 1024];
        int n;
        try (BlockCodec codec = new BlockCodec()) {
            n = codec.compress(raw, 0, raw.length, z, 0);
        }
        long first = s.appendFrame(fps, 0, raw.length / BS, z, 0, n, BS);
        long[] pbns = new long[raw.length / BS];
        for (int k = 0; k < pbns.length; k++) {
            pbns[k] = first + k;
        }
        return pbns;
    }

    private List<String> keys(String prefix) {
        return look.list(prefix);
    }

    @Test
    void sync_archivingWorker_sealsTheActiveLogIntoTheBucketUnderItsIdAndEpochOne() {
        WorkerRangeData a = node("a");
        DataStore s = a.claim(RANGE);
        append(s, RangeBlocks.blocks(1, 8, false));

        a.sync(s);

        assertThat(a.epoch()).isEqualTo(1);
        assertThat(keys(WorkerKeys.space(WORKER, 1) + "/logs/")).as("the sealed log, in the bucket when the sync returns").hasSize(1);
        a.sync(s); // nothing appended since: no new log
        assertThat(keys(WorkerKeys.prefix(WORKER))).as("the log and epoch 1's marker").hasSize(2);
        assertThat(keys(WorkerKeys.marker(WORKER, 1))).as("epoch 1 claimed create-only, as a takeover's epoch").hasSize(1);
    }

    @Test
    void sync_eachCommitWithNewBlocks_leavesOneSealedLogObject_costMeasured() {
        WorkerRangeData a = node("a");
        DataStore s = a.claim(RANGE);
        int commits = 20;
        long archived = 0;
        for (int i = 0; i < commits; i++) {
            append(s, RangeBlocks.blocks(100 + i, 8, false));
            long t = System.nanoTime();
            a.sync(s);
            archived += System.nanoTime() - t;
        }
        long local = 0;
        for (int i = 0; i < commits; i++) {
            append(s, RangeBlocks.blocks(200 + i, 8, false));
            long t = System.nanoTime();
            s.sync(); // what a local range store's commit does
            local += System.nanoTime() - t;
        }

        assertThat(keys(WorkerKeys.space(WORKER, 1) + "/logs/")).as("one object per commit: compaction never merges logs").hasSize(commits);
        System.out.printf("worker commit (8 blocks of 4 KiB): archived sync %.1f ms, local sync %.1f ms (mean of %d, S3Proxy on loopback)%n",
                archived / 1e6 / commits, local / 1e6 / commits, commits);
    }

    @Test
    void sync_bucketRefusingEveryRequest_failsSayingSoAfterTheStallTime_andSucceedsOnceItAnswers() throws Exception {
        try (SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            WorkerRangeData a = bucket.node(tmp.resolve("a").resolve(WorkerRangeData.DIRECTORY),
                    () -> S3ObjectStore.open(s3.settings(URI.create("http://127.0.0.1:" + proxy.port()), RangeBucket.PREFIX)), Duration.ofSeconds(1));
            a.identify(WORKER);
            DataStore s = a.claim(RANGE);
            append(s, RangeBlocks.blocks(2, 4, false));
            proxy.faults(new SlowDownProxy.Faults(1.0, 0, 0, 0, Duration.ZERO, 1)); // every request: 503 Slow Down

            assertThatThrownBy(() -> a.sync(s)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("object store is not reachable").hasMessageContaining("upload-stall-timeout")
                    .hasMessageContaining("run the backup again");
            assertThat(keys(WorkerKeys.space(WORKER, 1) + "/logs/")).as("no log (epoch 1's marker went at the claim)").isEmpty();

            proxy.faults(null);
            a.sync(s);
            assertThat(keys(WorkerKeys.space(WORKER, 1) + "/logs/")).as("the next sync uploads the log").hasSize(1);
        }
    }

    @Test
    void claim_emptyDirectoryWithObjectsOfItsId_takesTheRangeOverAtTheNextEpoch_everyBlockReadsBack() throws Exception {
        WorkerRangeData a = node("a");
        DataStore sa = a.claim(RANGE);
        byte[] one = RangeBlocks.blocks(3, 16, false);
        byte[] two = RangeBlocks.blocks(4, 16, true);
        byte[] frame = RangeBlocks.blocks(5, 8, true);
        long[] p1 = append(sa, one);
        a.sync(sa);
        long[] p2 = append(sa, two);
        long[] p3 = appendFrame(sa, frame);
        a.sync(sa);
        append(sa, RangeBlocks.blocks(6, 4, false)); // never synced: lost with the disk, as an uncommitted session's blocks
        long oldNext = sa.nextPbn();
        a.close();
        Path stale = tmp.resolve("stale");
        copy(tmp.resolve("a"), stale);
        delete(tmp.resolve("a"));

        WorkerRangeData b = node("b");
        DataStore sb = b.claim(RANGE);

        assertThat(b.epoch()).isEqualTo(2);
        RangeBlocks.assertStoreReads(sb, p1, one);
        RangeBlocks.assertStoreReads(sb, p2, two);
        RangeBlocks.assertStoreReads(sb, p3, frame);
        assertThat(sb.nextPbn()).as("past every adopted PBN").isGreaterThan(p3[p3.length - 1]).isLessThanOrEqualTo(oldNext);
        byte[] marker = look.getRange(WorkerKeys.marker(WORKER, 2), 0, (int) look.size(WorkerKeys.marker(WORKER, 2)).getAsLong());
        assertThat(new String(marker, StandardCharsets.UTF_8)).startsWith("holdfast-adopted-logs 1\nworker 3\nepoch 2\nlog workers/w3/e1/logs/")
                .endsWith("end 2\n");
        byte[] three = RangeBlocks.blocks(7, 4, false);
        long[] p4 = append(sb, three);
        b.sync(sb);
        assertThat(p4[0]).isGreaterThan(p3[p3.length - 1]);
        assertThat(keys(WorkerKeys.space(WORKER, 2) + "/logs/")).as("new logs under the new epoch").hasSize(1);
        RangeBlocks.assertStoreReads(sb, p4, three);

        // the same epoch claimed again (a node that listed before b's marker existed): refused
        assertThatThrownBy(() -> RangeTakeover.claim(new RangeTakeover.Plan(WORKER, 2, List.of()), look, tmp.resolve("scratch")))
                .isInstanceOf(RangeTakenOverException.class).hasMessageContaining("another node took worker 3's range over at epoch 2");
        // the old node back with its disk: it would write under epoch 1, which nobody reads; it refuses to serve
        WorkerRangeData old = bucket.node(stale.resolve(WorkerRangeData.DIRECTORY), bucket::client, Duration.ofSeconds(5));
        old.identify(WORKER);
        assertThatThrownBy(() -> old.claim(RANGE)).hasMessageContaining("taken over at epoch 2");
    }

    @Test
    void claim_openStoreRegisteredAgainAfterATakeover_refusesToServe() throws Exception {
        WorkerRangeData a = nodeTakenOverWhileAway(10); // a's link registers again: its store is still open over the same range

        assertThatThrownBy(() -> a.claim(RANGE)).isInstanceOf(StoreException.class).hasMessageContaining("taken over at epoch 2");
        assertThatThrownBy(() -> a.claim(RANGE)).as("and every later call").hasMessageContaining("taken over at epoch 2");
        assertThat(a.store()).isNull();
        assertThat(a.report().state()).isEqualTo(Heartbeat.RangeData.REFUSED);
    }

    @Test
    void gcDelta_nodeWhoseRangeWasTakenOver_failsAndLogsNothing() throws Exception {
        WorkerRangeData a = nodeTakenOverWhileAway(11);
        try (WorkerGcMetadata gc = gcMetadata("a")) {
            EmbeddedChannel ch = new EmbeddedChannel(
                    new FrameDecoder(), new FrameEncoder(),
                    new GcDeltaService(gc, RANGE, a));
            GcDelta d = new GcDelta(1, 0, 1,
                    new byte[] {(byte) GcDelta.RC_ADD}, new long[] {RANGE.first()}, new long[] {1});

            Object answer = DedupFramesBadInputTest.served(ch, d);

            assertThat(answer).isInstanceOf(GcDeltaFailed.class);
            assertThat(((GcDeltaFailed) answer).message()).contains("taken over at epoch 2");
            assertThat(gc.pipeline().lastOpId()).as("the delta is not acknowledged here: the range's owner must log it").isZero();
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void gcProtect_nodeWhoseRangeWasTakenOver_failsAndRecordsNothing() throws Exception {
        WorkerRangeData a = nodeTakenOverWhileAway(11);
        try (WorkerGcMetadata gc = gcMetadata("a")) {
            EmbeddedChannel ch = new EmbeddedChannel(
                    new FrameDecoder(), new FrameEncoder(),
                    new GcGuardService(gc, RANGE, a));

            Object answer = DedupFramesBadInputTest.served(ch, new GcProtect(7, 9, true, 1, new long[] {RANGE.first()}));

            assertThat(answer).isInstanceOf(GcGuardFailed.class);
            assertThat(((GcGuardFailed) answer).message()).contains("taken over at epoch 2").contains("nothing of it was protected");
            assertThat(gc.pipeline().updatesLogged()).as("the protection belongs in the range owner's GC metadata, not here").isZero();
            assertThat(gc.guard().openSessions()).as("no session tied to this node's guard").isZero();
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void gcImport_afterATakeover_rebuildsTheCountsOverTheAdoptedStore_countsLostGone() throws Exception {
        WorkerRangeData a = node("a");
        DataStore sa = a.claim(RANGE);
        long[] pbns = append(sa, RangeBlocks.blocks(9, 6, false));
        a.sync(sa);
        a.close();
        delete(tmp.resolve("a"));
        Path rangeData = tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY);
        WorkerRangeData b = node("b");
        long next;
        // as the worker's start opens them: the GC metadata first, its history check opening (taking over) the range store
        try (WorkerGcMetadata gc = new WorkerGcMetadata(rangeData.resolve("gc"), BoscSettings.defaults())) {
            gc.checkHistoryAgainst(r -> b.claim(r).nextPbn() - r.first());
            gc.claim(RANGE);
            next = b.store().nextPbn();
        }
        b.close();
        assertThat(rangeData.resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST)).as("the adopted blocks' counts are lost").exists();
        Path file = tmp.resolve("w3.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(file, new WorkerCountsFile.Header(WORKER, RANGE, 0, 0))) {
            for (long p : pbns) {
                w.add(p, 1, 0, 0);
            }
            w.finish();
        }

        WorkerGcImport.Report r = new WorkerGcImport(rangeData, Duration.ofHours(1), java.time.Clock.systemUTC(), line -> { }).run(file);

        assertThat(r.records()).isEqualTo(pbns.length);
        assertThat(r.handedOutLimit()).as("the adopted store's PBN reservation").isEqualTo(next);
        assertThat(r.countsLostRemoved()).isTrue();
        assertThat(rangeData.resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST)).doesNotExist();
    }

    @Test
    void workerFsck_afterATakeover_readsTheAdoptedBlocksFromTheBucketRefusedWithoutIt() throws Exception {
        WorkerRangeData a = node("a");
        DataStore sa = a.claim(RANGE);
        long[] pbns = append(sa, RangeBlocks.blocks(12, 6, false));
        a.sync(sa);
        a.close();
        delete(tmp.resolve("a"));
        WorkerRangeData b = node("b");
        b.claim(RANGE);
        b.close();
        Path file = tmp.resolve("w3.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(file, new WorkerCountsFile.Header(WORKER, RANGE, 0, 0))) {
            for (long p : pbns) {
                w.add(p, 1, 0, 0);
            }
            w.finish();
        }
        Path scratch = Files.createDirectories(tmp.resolve("fsck-scratch"));
        Path rangeData = tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY);
        List<String> objects = keys("");

        // the adopted logs (epoch 1's keys) live in the bucket only: a check of local logs alone would call every block lost
        WorkerFsckReport r = new WorkerFsck(rangeData, scratch, Duration.ofHours(1), line -> { }, s3.settings(RangeBucket.PREFIX)).run(file);

        assertThat(r.missing().count()).isZero();
        assertThat(r.corrupt().count()).isZero();
        assertThat(r.blocksRead()).as("every adopted block read from the bucket").isEqualTo(pbns.length);
        assertThat(r.exitCode()).as("no GC metadata here: counts not compared").isEqualTo(WorkerFsckReport.EXIT_NOT_COMPARABLE);
        assertThat(keys("")).as("nothing written to the bucket").isEqualTo(objects);
        WorkerFsck withoutBucket = new WorkerFsck(rangeData, scratch, Duration.ofHours(1), line -> { });
        assertThatThrownBy(() -> withoutBucket.run(file)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("archives its data logs to an object store (worker " + WORKER + ", epoch 2")
                .hasMessageContaining("nothing was checked");
    }

    @Test
    void claim_damagedMarkerOfTheNewestEpoch_refusesAndWritesNothing() throws Exception {
        WorkerRangeData a = node("a");
        DataStore sa = a.claim(RANGE);
        append(sa, RangeBlocks.blocks(8, 4, false));
        a.sync(sa);
        a.close();
        Path bad = Files.writeString(tmp.resolve("bad-marker"), "holdfast-adopted-logs 1\nworker 3\nepoch 2\nlog workers/w3/e1/logs/x\n");
        assertThat(look.putIfAbsent(WorkerKeys.marker(WORKER, 2), bad)).isTrue();
        List<String> before = keys("");

        WorkerRangeData b = node("b");
        assertThatThrownBy(() -> b.claim(RANGE)).isInstanceOf(StoreException.class).hasMessageContaining("adopted marker is damaged");

        assertThat(keys("")).as("nothing written to the bucket").isEqualTo(before);
        assertThat(tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY).resolve("catalog")).doesNotExist();
    }

    static void copy(Path from, Path to) throws Exception {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t);
                }
            }
        }
    }

    static void delete(Path dir) throws Exception {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
