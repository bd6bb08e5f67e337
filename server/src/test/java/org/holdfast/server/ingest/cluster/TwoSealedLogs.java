package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.WorkerKeys;

/**
 * A dead worker's range in the bucket: two sealed, uploaded logs of raw blocks (four, then three) written
 * by a real archiving range store at epoch 1, their object keys in log id order, and the full sealed-log
 * report the worker's last DATA_SYNCED carried.
 */
record TwoSealedLogs(byte[] first, byte[] second, long[] firstPbns, long[] secondPbns, List<String> keys, SealedLogReport report) {
    /** Archives them as worker {@code worker} over {@code range} through a node of {@code fixture}, blocks from {@code seed}. */
    static TwoSealedLogs archive(RangeBucket fixture, long worker, PbnRange range, long seed) {
        byte[] first = RangeBlocks.blocks(seed, 4, false);
        byte[] second = RangeBlocks.blocks(seed + 1, 3, false);
        WorkerRangeData node = fixture.node("worker", Duration.ofSeconds(10));
        node.identify(worker);
        DataStore s = node.claim(range);
        long[] firstPbns = RangeBlocks.appendRaw(s, first);
        node.sync(s); // the first log sealed and in the bucket
        long[] secondPbns = RangeBlocks.appendRaw(s, second);
        node.sync(s);
        SealedLogReport report = new SealedLogReporter(worker).next(s);
        node.close(); // the worker is dead
        List<String> keys = fixture.look.list(WorkerKeys.space(worker, 1) + "/logs/");
        assertThat(keys).hasSize(2);
        return new TwoSealedLogs(first, second, firstPbns, secondPbns, keys, report);
    }

    /** The second log cut by {@link #cutSecond}: its key, the length it was cut to and the bytes the worker sealed. */
    record Cut(String key, int at, byte[] sealed) {
    }

    /**
     * Replaces the second log in the bucket by its bytes up to its last record (the third block, stored raw):
     * what is left is a whole, valid log of two blocks, which only the master's record finds short.
     */
    Cut cutSecond(RangeBucket fixture, Path scratch) throws IOException {
        String key = keys.get(1);
        Path f = scratch.resolve("cut.hfl");
        fixture.look.download(key, f);
        byte[] log = Files.readAllBytes(f);
        int at = RangeBlocks.lastRecordAt(log, Arrays.copyOfRange(second, 2 * RangeBlocks.BS, 3 * RangeBlocks.BS));
        assertThat(at + FormatVersions.RECORD_HEADER_BYTES + RangeBlocks.BS).as("the block is the log's last record").isEqualTo(log.length);
        Files.write(f, Arrays.copyOf(log, at));
        fixture.replace(key, f);
        Files.delete(f);
        return new Cut(key, at, log);
    }
}
