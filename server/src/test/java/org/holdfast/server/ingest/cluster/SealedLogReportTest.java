package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.DiskSpace;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.SpaceReserve;
import org.holdfast.server.store.WorkerKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's sealed-log report ({@link SealedLogReporter}) from a real archiving range store on S3Proxy
 * into the master's records ({@link SealedLogStore}, real RocksDB), and a copy checked against them: the
 * first report is full and each log's size and SHA-256 are those of its object in the bucket; the next
 * names only the new log; a node that took the range over reports the adopted logs with the same digests;
 * the master's records then copy the range bit for bit.
 */
class SealedLogReportTest {
    private static final PbnRange RANGE = new PbnRange(9_000_000, 10_000_000);
    private static final long WORKER = 8;

    @TempDir
    Path tmp;
    private RangeBucket fixture;

    @Test
    void reports_fullThenNew_digestsOfTheObjects_takeoverReportsTheSame_recordsCopyBitForBit() throws Exception {
        try (RangeBucket bucket = RangeBucket.start(tmp)) {
            fixture = bucket;
            reportAndCopy();
        }
    }

    private void reportAndCopy() throws Exception {
        byte[] first = RangeBlocks.blocks(21, 3, false);
        byte[] second = RangeBlocks.blocks(22, 2, false);
        WorkerRangeData node = fixture.node("worker", Duration.ofSeconds(10));
        node.identify(WORKER);
        DataStore s = node.claim(RANGE);
        SealedLogReporter reporter = new SealedLogReporter(WORKER);
        long[] firstPbns = RangeBlocks.appendRaw(s, first);
        node.sync(s);
        SealedLogReport full = reporter.next(s);
        long[] secondPbns = RangeBlocks.appendRaw(s, second);
        node.sync(s);
        SealedLogReport next = reporter.next(s);
        SealedLogReport quiet = reporter.next(s);
        node.close();

        List<String> keys = fixture.look.list(WorkerKeys.space(WORKER, 1) + "/logs/");
        assertThat(keys).hasSize(2);
        assertThat(full.full()).isTrue();
        assertThat(full.unhashed()).isZero();
        assertThat(full.sealed()).singleElement().satisfies(l -> assertMatchesObject(l, keys.get(0)));
        assertThat(next.full()).isFalse();
        assertThat(next.sealed()).singleElement().satisfies(l -> assertMatchesObject(l, keys.get(1)));
        assertThat(next.dropped()).isEmpty();
        assertThat(quiet.sealed()).as("nothing new").isEmpty();

        try (WorkerRangeData taker = fixture.node("taker", Duration.ofSeconds(10))) {
            taker.identify(WORKER);
            DataStore t = taker.claim(RANGE);
            assertThat(taker.epoch()).isEqualTo(2);
            SealedLogReport adopted = new SealedLogReporter(WORKER).next(t);
            assertThat(adopted.full()).isTrue();
            assertThat(adopted.unhashed()).isZero();
            assertThat(adopted.sealed()).hasSize(2);
            assertMatchesObject(adopted.sealed().get(0), keys.get(0));
            assertMatchesObject(adopted.sealed().get(1), keys.get(1));
        }

        try (MetadataDb catalog = MetadataDb.open(tmp.resolve("master-catalog"))) {
            SealedLogStore records = new SealedLogStore(catalog);
            records.apply(WORKER, full);
            records.apply(WORKER, next);
            SealedLogs sealed = records.forWorker(WORKER);
            assertThat(sealed.keys()).containsExactlyElementsOf(keys);
            try (RangeCopy c = RangeCopy.materialise(WORKER, RANGE, fixture.client(), LogCache.Settings.defaults(), tmp.resolve("copy"),
                    new SpaceReserve(DiskSpace.of(tmp), 0, tmp.toString()), sealed)) {
                c.awaitBuilt();
                assertThat(c.logProblems()).isEmpty();
                RangeBlocks.assertCopyReads(c, firstPbns, first);
                RangeBlocks.assertCopyReads(c, secondPbns, second);
            }
        }
    }

    /** {@code l} names object {@code key} and has its size and SHA-256. */
    private void assertMatchesObject(SealedLogReport.Sealed l, String key) {
        assertThat(WorkerKeys.logKey(WORKER, l.epoch(), l.logId(), l.logEpoch())).isEqualTo(key);
        Path f = tmp.resolve("object.hfl");
        try {
            Files.deleteIfExists(f);
            fixture.look.download(key, f);
            assertThat(l.size()).isEqualTo(Files.size(f));
            assertThat(l.sha256()).isEqualTo(SealedLogs.sha256(f));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
