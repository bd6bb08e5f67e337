package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.DiskSpace;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.SpaceReserve;
import org.holdfast.server.store.object.ObjectStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master's copy of a lost worker's range checked against its records of the worker's sealed logs
 * ({@link SealedLogs}), on S3Proxy with a real archiving range store of two sealed logs: an honest bucket
 * copies bit for bit; a log cut at a record boundary, a log planted over a recorded one and a deleted log
 * are each reported naming the log, and no block is served from them; without records (a worker that
 * reports none) the copy reads the bucket as listed, as before, and the cut goes unseen.
 */
class RangeCopySealedLogsTest {
    private static final PbnRange RANGE = new PbnRange(7_000_000, 8_000_000);
    private static final long WORKER = 6;

    @TempDir
    Path tmp;
    private RangeBucket fixture;
    private ObjectStore look;
    private byte[] first;
    private byte[] second;
    private long[] firstPbns;
    private long[] secondPbns;
    /** The object keys of the two logs, in log id order. */
    private List<String> keys;
    private TwoSealedLogs logs;

    @BeforeEach
    void archiveTwoLogs() throws Exception {
        fixture = RangeBucket.start(tmp);
        look = fixture.look;
        logs = TwoSealedLogs.archive(fixture, WORKER, RANGE, 11);
        first = logs.first();
        second = logs.second();
        firstPbns = logs.firstPbns();
        secondPbns = logs.secondPbns();
        keys = logs.keys();
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    /** The records an honest worker reports: each log object's size and SHA-256, as uploaded. */
    private SealedLogs honestRecords() throws Exception {
        return fixture.recordsOf(keys);
    }

    private RangeCopy copy(SealedLogs sealed) {
        RangeCopy c = RangeCopy.materialise(WORKER, RANGE, fixture.client(), LogCache.Settings.defaults(), tmp.resolve("copy"),
                new SpaceReserve(DiskSpace.of(tmp), 0, tmp.toString()), sealed);
        c.awaitBuilt();
        return c;
    }

    @Test
    void honestBucket_copiesBitForBit_noProblem() throws Exception {
        try (RangeCopy c = copy(honestRecords())) {
            RangeBlocks.assertCopyReads(c, firstPbns, first);
            RangeBlocks.assertCopyReads(c, secondPbns, second);
            assertThat(c.logProblems()).isEmpty();
            assertThat(c.damagedBlocks()).isZero();
        }
    }

    @Test
    void logCutAtARecordBoundary_unseenWithoutRecords_reportedWithThem_itsBlocksNeverServed() throws Exception {
        SealedLogs records = honestRecords();
        TwoSealedLogs.Cut c2 = logs.cutSecond(fixture, tmp);
        String cut = c2.key();
        int at = c2.at();
        byte[] log = c2.sealed();

        try (RangeCopy c = copy(SealedLogs.NONE)) { // the old behaviour: the missing block is only "not in the copy"
            assertThat(c.damagedBlocks()).isZero();
            assertThat(c.logProblems()).isEmpty();
            RangeBlocks.assertCopyReads(c, Arrays.copyOf(secondPbns, 2), Arrays.copyOf(second, 2 * BS));
        }
        try (RangeCopy c = copy(records)) {
            assertThat(c.logProblems()).singleElement().asString().contains("worker " + WORKER + "'s log " + cut + " is " + at
                    + " bytes in the bucket, but the worker sealed it at " + log.length + " bytes, SHA-256 ");
            RangeBlocks.assertCopyReads(c, firstPbns, first);
            for (long pbn : secondPbns) { // not even the blocks the cut log still holds: it is not what the worker sealed
                assertThatThrownBy(() -> readOne(c, pbn)).isInstanceOf(BlocksUnavailableException.class)
                        .hasMessageContaining("do not match the master's records").hasMessageContaining(cut);
            }
        }
    }

    @Test
    void logPlantedOverARecordedOne_notServed_theRecordedLogIs() throws Exception {
        SealedLogs records = honestRecords();
        // the second log's bytes under the first log's id with a newer log epoch: the takeover rule prefers it
        String planted = keys.get(0).substring(0, keys.get(0).length() - 20) + "7fffffffffffffff.hfl";
        Path f = tmp.resolve("planted.hfl");
        look.download(keys.get(1), f);
        assertThat(look.putIfAbsent(planted, f)).isTrue();

        try (RangeCopy c = copy(SealedLogs.NONE)) { // the old behaviour: the planted log hides the first one
            assertThatThrownBy(() -> readOne(c, firstPbns[0])).isInstanceOf(BlocksUnavailableException.class);
        }
        try (RangeCopy c = copy(records)) {
            RangeBlocks.assertCopyReads(c, firstPbns, first);
            RangeBlocks.assertCopyReads(c, secondPbns, second);
            assertThat(c.logProblems()).singleElement().asString().contains(planted)
                    .contains("the master has no record of the worker sealing it");
        }
    }

    @Test
    void recordedLogDeletedFromTheBucket_reportedNamingIt_itsBlocksUnavailable_theRestReads() throws Exception {
        SealedLogs records = honestRecords();
        look.delete(keys.get(0));

        try (RangeCopy c = copy(records)) {
            assertThat(c.logProblems()).singleElement().asString().contains(keys.get(0))
                    .contains("is recorded on the master but missing from the bucket");
            assertThatThrownBy(() -> readOne(c, firstPbns[1])).isInstanceOf(BlocksUnavailableException.class)
                    .hasMessageContaining("unavailable, not absent").hasMessageContaining(keys.get(0));
            RangeBlocks.assertCopyReads(c, secondPbns, second);
        }
    }

    private static void readOne(RangeCopy c, long pbn) {
        c.readBatch(new long[] {pbn}, 0, 1, new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES));
    }
}
