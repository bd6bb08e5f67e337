package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.server.store.DataStore;
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
}
