package org.holdfast.server.ingest.cluster;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;

/**
 * A master's cluster port and one worker node "w1" serving its range data from {@code <dir>/w1/range-data},
 * over a real link in this JVM: the harness of the range-data link tests.
 */
final class OneRangeWorker implements AutoCloseable {
    /** The first PBN of the first worker's range. */
    static final long FIRST = MembershipSettings.DEFAULT_FIRST_PBN;

    final TestMaster master;
    private final Path dir;
    private final Path tokenFile;
    private WorkerRangeData data;
    private WorkerConnector worker;

    /** Heartbeats every 500 ms, late after 2 s; {@code lostAfter} is also the master's call timeout. */
    OneRangeWorker(Path dir, Duration lostAfter) throws IOException {
        this.dir = dir;
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofMillis(500), Duration.ofSeconds(2),
                lostAfter, FIRST, MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE);
        tokenFile = dir.resolve("worker.token");
        Files.writeString(tokenFile, master.workerToken());
    }

    /** Starts "w1" with data logs of {@code logRollBytes} and {@code minFreeBytes} kept free; the master's end of its store once up. */
    RemoteRangeStore start(long logRollBytes, long minFreeBytes) {
        data = new WorkerRangeData(dir.resolve("w1").resolve("range-data"),
                new DataStore.Settings(dir.resolve("unused"), logRollBytes, FsyncPolicy.COMMIT, 64, minFreeBytes));
        worker = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(dir), null, data);
        worker.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> worker.status().connected() && master.server.rangeStores().up(1) != null);
        return master.server.rangeStores().up(1);
    }

    /** Why {@code call} failed: the cause of the {@link CompletionException} it threw (fails the test if it succeeded). */
    static Throwable cause(Runnable call) {
        try {
            call.run();
        } catch (CompletionException e) {
            return e.getCause();
        }
        throw new AssertionError("the call succeeded");
    }

    /** The worker's range data while it runs. */
    WorkerRangeData data() {
        return data;
    }

    /** Stops the worker and closes its range data (the master keeps running). */
    void stopWorker() {
        if (worker != null) {
            worker.close();
            worker = null;
        }
        if (data != null) {
            data.close();
            data = null;
        }
    }

    @Override
    public void close() {
        stopWorker();
        master.close();
    }
}
