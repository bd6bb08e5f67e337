package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.cluster.SealedLogLinkOrderTest.sha;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.DataSync;
import org.holdfast.common.protocol.DataSynced;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.common.protocol.SealedLogsPush;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.WorkerKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A DATA_SYNCED's sealed-log report and the SEALED_LOGS that follows it on the same link are recorded
 * (real RocksDB) in the order the worker sent them, also when the worker answers before the master's
 * syncing thread gets to the answer (a descheduled thread, a GC pause): the SEALED_LOGS is incremental
 * on the DATA_SYNCED's report, and recorded before it, the older report would undo it.
 */
class SyncReportOrderTest {
    @TempDir
    Path dir;


    @Test
    void workerAnswersBeforeTheSyncingThreadLooks_syncReportThenPushRecordedInLinkOrder() throws Exception {
        SealedLogReport synced = new SealedLogReport(true, List.of(new SealedLogReport.Sealed(1, 1, 5, 4096, sha(0)),
                new SealedLogReport.Sealed(2, 1, 1, 4096, sha(1))), List.of(), 0);
        // after the sync: log 1 compacted to log epoch 6, log 3 sealed and uploaded
        SealedLogReport pushed = new SealedLogReport(false, List.of(new SealedLogReport.Sealed(1, 1, 6, 2048, sha(9)),
                new SealedLogReport.Sealed(3, 1, 1, 4096, sha(2))), List.of(), 0);
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            EmbeddedChannel link = new EmbeddedChannel();
            RemoteRangeStore rs = new RemoteRangeStore("w1", new PbnRange(1L << 48, 2L << 48), link, Duration.ofSeconds(10));
            rs.recordsSealedLogs(1, store::apply, new SealedLogOrder(), Register.SYNC_REPORT_VERSION);
            link.pipeline().addLast(rs.answers());
            // the worker: answers DATA_SYNC at once, and its next heartbeat's SEALED_LOGS follows on the link, both
            // arriving before sync() returns to its caller
            link.pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    if (msg instanceof DataSync s) {
                        promise.setSuccess();
                        ctx.pipeline().fireChannelRead(new DataSynced(s.requestId(), 100, synced));
                        ctx.pipeline().fireChannelRead(new SealedLogsPush(1, pushed));
                        return;
                    }
                    ctx.write(msg, promise);
                }
            });
            assertThat(rs.sync().get(10, TimeUnit.SECONDS)).isEqualTo(100);
            // the SEALED_LOGS is recorded after the sync's report (which the sync waited for): wait for it; recorded in
            // the wrong order the records would stay the older report's
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(store.forWorker(1).keys())
                    .as("what the bucket holds now").containsExactlyInAnyOrder(
                    WorkerKeys.logKey(1, 1, 1, 6), WorkerKeys.logKey(1, 1, 2, 1), WorkerKeys.logKey(1, 1, 3, 1)));
            Thread.sleep(100); // a report recorded late would land now
            assertThat(store.forWorker(1).keys()).contains(WorkerKeys.logKey(1, 1, 3, 1));
            link.finishAndReleaseAll();
        }
    }
}
