package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.gc.WorkerFsck;
import org.holdfast.server.ingest.cluster.RangeBlocks;
import org.holdfast.server.ingest.cluster.WorkerGcImport;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.RangeTakeover;
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
 * {@code worker-fsck} of a stopped worker whose range store archives to a bucket (S3Proxy), with
 * every sealed log evicted from its local cache, so that the referenced blocks are in the bucket
 * only: clean when they read back; a byte flipped in the bucket is a corrupt block named by its
 * PBN; without the worker's bucket settings, with a bucket that does not answer, or one that stops
 * answering once the blocks are read, it could not run (exit 3) and calls no block lost; so too with
 * another prefix's bucket, or once another node took the range over (a stale directory). No run writes in the data directory or the bucket.
 */
class WorkerFsckArchivedTest {
    private static final PbnRange RANGE = new PbnRange(1L << 48, (1L << 48) + (1L << 40));
    private static final long WORKER = 2;
    private static final int STORED = 24;
    private static final int REFERENCED = 16;
    private static final long MARK = GcDelta.deltaId(3, GcDelta.MAX_PART);
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-06-01T00:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path dir;
    private S3ProxyFixture s3;
    private ObjectStore look;
    private Path dataDir;
    private Path file;
    private final long[] pbns = new long[STORED];
    // log id and offset of the referenced block the corruption test flips
    private final long[] flipped = new long[3];

    @BeforeEach
    void archivingWorkerWithEvictedLogs() throws Exception {
        s3 = S3ProxyFixture.start(dir.resolve("s3"));
        look = S3ObjectStore.open(s3.settings("c/"));
        dataDir = dir.resolve("worker");
        Path rangeData = dataDir.resolve(WorkerRangeData.DIRECTORY);
        Files.createDirectories(dataDir.resolve("catalog")); // the worker's own catalog; the check reads only range-data
        byte[] raw = RangeBlocks.blocks(5, STORED, false);
        byte[] fps = RangeBlocks.fps(raw);
        // 64 KiB logs: the blocks span a few sealed logs, each synced to the bucket as at a commit
        try (WorkerRangeData node = new WorkerRangeData(rangeData, new DataStore.Settings(dir.resolve("unused"), 64L << 10,
                FsyncPolicy.COMMIT, 16, 0), new WorkerRangeData.Archive(() -> S3ObjectStore.open(s3.settings("c/")),
                LogCache.Settings.defaults(), Duration.ofSeconds(10)))) {
            node.identify(WORKER);
            DataStore s = node.claim(RANGE);
            for (int k = 0; k < STORED; k++) {
                pbns[k] = s.append(fps, k * 32, raw, k * RangeBlocks.BS, RangeBlocks.BS, FormatVersions.CODEC_RAW, RangeBlocks.BS);
            }
            node.sync(s);
            s.locations().forEach((pbn, logId, offset, len, f, fOff) -> {
                if (pbn == pbns[9]) {
                    flipped[0] = pbn;
                    flipped[1] = logId;
                    flipped[2] = offset;
                }
                return true;
            });
        }
        evictSealedLogs(rangeData.resolve("data"));
        file = dir.resolve("w2.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(file, new WorkerCountsFile.Header(WORKER, RANGE, MARK, CLOCK.millis()))) {
            for (int i = 0; i < REFERENCED; i++) {
                w.add(pbns[i], 1, 0, 0);
            }
            w.finish();
        }
        new WorkerGcImport(rangeData, Duration.ofHours(2), CLOCK, line -> { }).run(file);
    }

    /** As the worker's cache evicts them: every sealed log's file goes (all are in the bucket after the sync); the active one stays. */
    private static void evictSealedLogs(Path logs) throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.list(logs)) {
            files = s.filter(p -> DataLog.parseId(p.getFileName().toString()) >= 0).sorted().toList();
        }
        assertThat(files).as("a few sealed logs and the active one").hasSizeGreaterThan(2);
        for (Path p : files.subList(0, files.size() - 1)) {
            Files.delete(p);
        }
    }

    @AfterEach
    void stop() throws Exception {
        look.close();
        s3.close();
    }

    private WorkerFsckRuns.Run fsckAt(String endpoint, String... more) {
        List<String> args = new ArrayList<>(List.of("--data-dir", dataDir.toString(), "--scratch-dir", dir.toString(), "--counts",
                file.toString()));
        if (endpoint != null) {
            args.addAll(List.of("--holdfast.store.backend=s3", "--holdfast.store.s3.endpoint=" + endpoint,
                    "--holdfast.store.s3.bucket=" + s3.bucket(), "--holdfast.store.s3.prefix=" + s3.prefix("c/"),
                    "--holdfast.store.s3.credentials-file=" + dir.resolve("s3").resolve("s3-credentials.properties")));
        }
        args.addAll(List.of(more));
        return WorkerFsckRuns.run(args.toArray(String[]::new));
    }

    private WorkerFsckRuns.Run fsck(String... more) {
        return fsckAt(s3.endpoint().toString(), more);
    }

    private List<String> listing() throws Exception {
        return WorkerFsckRuns.listing(dataDir);
    }

    private List<String> scratchLeft() throws Exception {
        return WorkerFsckRuns.scratchLeft(dir);
    }

    /** Every key in the bucket under the test's prefix with its size and the SHA-256 of its bytes. */
    private List<String> bucket() throws Exception {
        List<String> out = new ArrayList<>();
        for (String k : look.list("")) {
            Path f = dir.resolve("object");
            look.download(k, f);
            out.add(k + " " + look.size(k).getAsLong() + " "
                    + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))));
            Files.delete(f);
        }
        return out;
    }

    @Test
    void run_sealedLogsInTheBucketOnly_everyReferencedBlockReadFromTheBucketCleanNothingWritten() throws Exception {
        List<String> before = listing();
        List<String> objects = bucket();
        Thread.sleep(20); // a write during the run would show as a later mtime

        WorkerFsckRuns.Run r = fsck();

        assertThat(r.code()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("worker-fsck: worker " + WORKER, REFERENCED + " referenced blocks", STORED + " stored blocks",
                "missing blocks (DATA LOSS): 0", "corrupt blocks (DATA LOSS): 0", "read " + REFERENCED + " blocks", "result: clean");
        assertThat(r.err()).contains("from the object store", WorkerKeys.space(WORKER, 1) + "/").containsPattern("read from the object"
                + " store: [1-9][0-9]* GETs");
        assertThat(listing()).as("nothing in the data directory changed").isEqualTo(before);
        assertThat(bucket()).as("nothing in the bucket changed").isEqualTo(objects);
        assertThat(scratchLeft()).as("the scratch copy (and the ranges fetched into it) is deleted").isEmpty();

        WorkerFsckRuns.Run json = fsck("--json");
        assertThat(json.code()).isZero();
        assertThat(json.out()).startsWith("{\"result\":\"clean\"").contains("\"blocksRead\":" + REFERENCED, "\"marks\":\"equal\"");
    }

    @Test
    void run_blockFlippedInTheBucket_corruptBlockNamedDataLoss() throws Exception {
        String key = look.list(WorkerKeys.space(WORKER, 1) + "/logs/" + String.format("%08x", (int) flipped[1])).get(0);
        Path f = dir.resolve("log.hfl");
        look.download(key, f);
        byte[] log = Files.readAllBytes(f);
        log[(int) flipped[2] + FormatVersions.RECORD_HEADER_BYTES + 100] ^= 0x5a;
        Files.write(f, log);
        look.delete(key);
        assertThat(look.putIfAbsent(key, f)).isTrue();
        List<String> before = listing();
        List<String> objects = bucket();

        WorkerFsckRuns.Run r = fsck();

        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.out()).contains("corrupt blocks (DATA LOSS): 1 e.g. PBN [" + flipped[0] + "]", "missing blocks (DATA LOSS): 0",
                "result: DATA LOSS");
        assertThat(listing()).as("marked bad in the scratch copy only").isEqualTo(before);
        assertThat(bucket()).isEqualTo(objects);
    }

    @Test
    void run_withoutTheWorkersBucketSettings_couldNotRunSayingWhichNothingWritten() throws Exception {
        List<String> before = listing();

        WorkerFsckRuns.Run r = fsckAt(null);

        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(3);
        assertThat(r.err()).contains("archives its data logs to an object store (worker " + WORKER + ", epoch 1",
                "nothing was checked", "--holdfast.store.backend=s3 --holdfast.store.s3.bucket=", "HOLDFAST_STORE_*");
        assertThat(r.out()).isEmpty();
        assertThat(listing()).isEqualTo(before);
        assertThat(scratchLeft()).isEmpty();
    }

    @Test
    void run_bucketUnreachable_couldNotRunNoBlockCalledLostNothingWritten() throws Exception {
        List<String> before = listing();
        int closed;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            closed = free.getLocalPort(); // nothing listens there once it is closed
        }
        // the check itself, with the fixture's short retries (the command's are the server's: 6 attempts, seconds of backoff);
        // the command maps what it throws to exit 3, as without settings above
        WorkerFsck check = new WorkerFsck(dataDir.resolve(WorkerRangeData.DIRECTORY), dir, Duration.ZERO, line -> { },
                s3.settings(java.net.URI.create("http://127.0.0.1:" + closed), "c/"));

        assertThatThrownBy(() -> check.run(file)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the object store cannot be read (http://127.0.0.1:" + closed).hasMessageContaining("nothing was checked")
                .hasMessageContaining("holdfast.store.s3.* settings and the object store's health");
        assertThat(listing()).isEqualTo(before);
        assertThat(scratchLeft()).isEmpty();
    }

    @Test
    void run_bucketStopsAnsweringOnceTheCheckReads_couldNotRunNoBlockCalledLost() throws Exception {
        List<String> before = listing();
        try (SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            // the listing at the start gets through; from the first block read on, every request is answered 503
            WorkerFsck check = new WorkerFsck(dataDir.resolve(WorkerRangeData.DIRECTORY), dir, Duration.ZERO, line -> {
                if (line.startsWith("reading data logs")) {
                    proxy.failNext(1_000_000);
                }
            }, s3.settings(java.net.URI.create("http://127.0.0.1:" + proxy.port()), "c/"));

            assertThatThrownBy(() -> check.run(file)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("could not be read while the blocks were checked")
                    .hasMessageContaining("no block was reported lost").hasMessageContaining("run worker-fsck again");
        }
        assertThat(listing()).isEqualTo(before);
        assertThat(scratchLeft()).isEmpty();
    }

    @Test
    void run_anotherPrefixOrTheRangeTakenOverSince_refusedExit3NothingChecked() throws Exception {
        List<String> before = listing();
        WorkerFsckRuns.Run other = WorkerFsckRuns.run("--data-dir", dataDir.toString(), "--scratch-dir", dir.toString(), "--counts",
                file.toString(), "--holdfast.store.backend=s3", "--holdfast.store.s3.endpoint=" + s3.endpoint(),
                "--holdfast.store.s3.bucket=" + s3.bucket(), "--holdfast.store.s3.prefix=" + s3.prefix("elsewhere/"),
                "--holdfast.store.s3.credentials-file=" + dir.resolve("s3").resolve("s3-credentials.properties"));
        RangeTakeover.claim(RangeTakeover.plan(WORKER, look), look, dir.resolve("claim")); // another node takes the range at epoch 2

        WorkerFsckRuns.Run stale = fsck();

        assertThat(other.code()).as(other.out() + other.err()).isEqualTo(3);
        assertThat(other.err()).contains("holds no object of " + WorkerKeys.space(WORKER, 1) + "/", "not the worker's bucket settings",
                "nothing was checked");
        assertThat(stale.code()).as(stale.out() + stale.err()).isEqualTo(3);
        assertThat(stale.err()).contains("taken over at epoch 2 by another node", "this directory is stale", "nothing was checked");
        assertThat(other.out() + stale.out()).isEmpty();
        assertThat(listing()).isEqualTo(before);
    }
}
