package org.holdfast.server.ingest.cluster;

import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;
import static org.holdfast.server.ingest.cluster.RangeBlocks.fps;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SegmentRecord;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;

/**
 * The parts the range-GC link tests (GcSweepLinkTest, StaleMarksForwardTest, SweepAfterLinkFlapTest)
 * build a master and a sweeping worker node from, each made as those tests made it; the test keeps
 * owning what it opens and closes it in its own order.
 */
final class RangeGcParts {
    private RangeGcParts() {
    }

    /** A master's cluster port over {@code dir/catalog}: heartbeats every {@code heartbeat}, late after 2 s, lost after 10 s. */
    static TestMaster master(Path dir, Duration heartbeat) {
        return new TestMaster(dir.resolve("catalog"), new MembershipSettings(heartbeat, Duration.ofSeconds(2), Duration.ofSeconds(10),
                OneRangeWorker.FIRST, MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE);
    }

    /** A new worker token of {@code master}, in {@code dir/worker.token}. */
    static Path tokenFile(Path dir, TestMaster master) throws IOException {
        Path tokenFile = dir.resolve("worker.token");
        Files.writeString(tokenFile, master.workerToken());
        return tokenFile;
    }

    /** The range data of the node in {@code node}: data logs of 1 MiB. */
    static WorkerRangeData rangeData(Path dir, Path node) {
        return new WorkerRangeData(node.resolve("range-data"), new DataStore.Settings(dir.resolve("unused"), 1L << 20, FsyncPolicy.COMMIT,
                64, 0));
    }

    /** The GC metadata of the node in {@code node} (one committer), with a grace of {@code grace}. */
    static WorkerGcMetadata gcMetadata(Path node, Duration grace, Clock clock) {
        return new WorkerGcMetadata(node.resolve("range-data").resolve("gc"), BoscSettings.defaults().withCommitters(1), grace, clock);
    }

    /** A small Sungem engine with its index in {@code index}, opened on first use. */
    static LazyDedupWorker engine(Path index, Clock clock) {
        return new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index, SungemFingerprintIndexTest.smallSettings(), clock));
    }

    /**
     * Stores the {@code n} blocks of {@code raw} through {@code store} (synced) and records them as one new
     * segment in each of {@code engines} (flushed), as a backup would; returns their PBNs.
     */
    static long[] storeAndRecord(RemoteRangeStore store, byte[] raw, int n, DedupWorker... engines) {
        long[] pbns = new long[n];
        for (int k = 0; k < n; k++) {
            byte[] blk = Arrays.copyOfRange(raw, k * BS, (k + 1) * BS);
            pbns[k] = store.store(PayloadCodec.RAW, BS, 1, fps(blk), blk).join();
        }
        store.sync().join();
        boolean[] isNew = new boolean[n];
        Arrays.fill(isNew, true);
        for (DedupWorker e : engines) {
            e.record(new SegmentRecord(1, fps(raw), n, pbns, isNew, n)).join();
            e.flush();
        }
        return pbns;
    }

    /**
     * A thread holding {@code data}'s lock (as behind a long disk operation: a sweep or a data request waits
     * in it) until {@code release} counts down (or 30 s); returned once it holds it.
     */
    static Thread holdRangeData(WorkerRangeData data, CountDownLatch release) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (data) {
                held.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        holder.start();
        held.await();
        return holder;
    }
}
