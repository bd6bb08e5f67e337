package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.WorkerKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's sealed-log reports across its links, recorded into the master's catalog (real RocksDB):
 * a report of the worker's older link that is still queued (a slow synced write) when the worker
 * registered again and its new link's full report came, never lands after that full report; one sent
 * on the older link after the newer registered is not recorded. Else the older report would put back a
 * compacted log's deleted object and drop the record of a log uploaded since, and a copy or takeover of
 * the range would refuse or miss that log's committed blocks.
 */
class SealedLogLinkOrderTest {
    @TempDir
    Path dir;
    private final SealedLogOrder order = new SealedLogOrder(); // the master's

    /** A SHA-256 standing for an object's: 32 bytes starting with {@code first}. */
    static byte[] sha(int first) {
        return java.util.Arrays.copyOf(new byte[] {(byte) first}, 32);
    }


    @Test
    void olderLinksQueuedReport_neverLandsAfterTheNewerLinksFullReport() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2); // as the common pool on a machine with more cores
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            CountDownLatch newerSubmitted = new CountDownLatch(1);
            CountDownLatch newerRecorded = new CountDownLatch(1);
            SealedLogRecorder slowFirst = (w, r) -> {
                if (r.sealed().size() == 1) { // the older link's report: a synced write that takes its time
                    await(newerSubmitted, 5);
                    await(newerRecorded, 1); // lands after the newer one if nothing orders the two
                }
                store.apply(w, r);
                if (r.sealed().size() == 3) {
                    newerRecorded.countDown();
                }
            };
            // older link: log 1 at log epoch 5, as the worker reported it before compacting it
            SealedLogIntake older = intake(7, slowFirst, pool);
            var first = older.record(new SealedLogReport(true, List.of(new SealedLogReport.Sealed(1, 1, 5, 4096, sha(0))), List.of(), 0));
            // the worker registered again: its newer link's first report is full (log 1 compacted to epoch 6, logs 2 and 3 since)
            SealedLogIntake newer = intake(7, slowFirst, pool);
            var second = newer.record(new SealedLogReport(true, List.of(new SealedLogReport.Sealed(1, 1, 6, 2048, sha(9)),
                    new SealedLogReport.Sealed(2, 1, 1, 4096, sha(1)), new SealedLogReport.Sealed(3, 1, 1, 4096, sha(2))), List.of(), 0));
            newerSubmitted.countDown();
            second.get(10, TimeUnit.SECONDS);
            first.handle((v, e) -> null).get(10, TimeUnit.SECONDS);

            assertThat(store.forWorker(7).keys()).as("the newer link's full report, as the bucket holds it").containsExactlyInAnyOrder(
                    WorkerKeys.logKey(7, 1, 1, 6), WorkerKeys.logKey(7, 1, 2, 1), WorkerKeys.logKey(7, 1, 3, 1));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void reportOfAnOlderLinkAfterTheNewerRegistered_notRecorded_recordsUnchanged() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (MetadataDb db = MetadataDb.open(dir)) {
            SealedLogStore store = new SealedLogStore(db);
            SealedLogIntake older = intake(7, store::apply, pool);
            SealedLogIntake newer = intake(7, store::apply, pool);
            newer.record(new SealedLogReport(true, List.of(new SealedLogReport.Sealed(1, 2, 6, 2048, sha(9))), List.of(), 0))
                    .get(10, TimeUnit.SECONDS);
            // the older link (its node paused past lost-after, another took the range over) speaks after the newer registered
            var stale = older.record(new SealedLogReport(false, List.of(new SealedLogReport.Sealed(4, 1, 1, 4096, sha(3))), List.of(1), 0));
            assertThat(stale.handle((v, e) -> e).get(10, TimeUnit.SECONDS)).as("refused").isNotNull()
                    .rootCause().hasMessageContaining("a newer link of worker 7 registered");
            assertThat(store.forWorker(7).keys()).as("the newer link's record only").containsExactly(WorkerKeys.logKey(7, 2, 1, 6));
        } finally {
            pool.shutdownNow();
        }
    }

    /** The intake of a new link of worker {@code worker} on this master, recording on {@code pool}. */
    private SealedLogIntake intake(long worker, SealedLogRecorder recorder, ExecutorService pool) {
        return new SealedLogIntake(worker, recorder, order, pool);
    }

    private static void await(CountDownLatch l, int seconds) {
        try {
            l.await(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
