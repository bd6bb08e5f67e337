package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.server.store.DataStore;

/**
 * The heartbeat's range-data figures of a worker's range store ({@link WorkerRangeData#report()}),
 * measured off the link's event loop: the store's next PBN waits for its append lock (held across an
 * append's fsync), and the size of the data logs is a listing of the disk.
 */
final class RangeDataFigures implements AutoCloseable {
    private final Path dataDir;
    private final Supplier<DataStore> store;
    private final BooleanSupplier refused;
    private volatile Heartbeat.RangeData measured;
    private final AtomicBoolean measuring = new AtomicBoolean();

    private final ExecutorService measurer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "holdfast-range-data-report");
        t.setDaemon(true);
        return t;
    });

    /**
     * Figures of the store {@code store} returns (null: none open) with its data logs in {@code dataDir};
     * {@code refused} tells a refused store from one not open yet. Reads both without a lock.
     */
    RangeDataFigures(Path dataDir, Supplier<DataStore> store, BooleanSupplier refused) {
        this.dataDir = dataDir;
        this.store = store;
        this.refused = refused;
        this.measured = notServing();
    }

    /**
     * The figures measured last (they lag one heartbeat interval), never waiting; has them measured
     * again on a thread of their own.
     */
    Heartbeat.RangeData report() {
        if (measuring.compareAndSet(false, true)) {
            try {
                measurer.execute(() -> {
                    try {
                        measured = measure();
                    } catch (RuntimeException e) {
                        // a store closed under the measurement: the next heartbeat measures again
                    } finally {
                        measuring.set(false);
                    }
                });
            } catch (RejectedExecutionException e) {
                measuring.set(false); // closed: the worker is stopping
            }
        }
        return measured;
    }

    /** Measures now, on the calling thread (a store just opened: on the claiming thread, not the event loop). */
    void measureNow() {
        measured = measure();
    }

    /** The store is closed or refused: the figures say so until it serves again. */
    void notServingNow() {
        measured = notServing();
    }

    /** The figures as they stand; may wait for the store's append lock and the disk. */
    private Heartbeat.RangeData measure() {
        DataStore s = store.get();
        if (s != null) {
            return new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, s.nextPbn(), logBytes());
        }
        return notServing();
    }

    private Heartbeat.RangeData notServing() {
        return new Heartbeat.RangeData(refused.getAsBoolean() ? Heartbeat.RangeData.REFUSED : Heartbeat.RangeData.NOT_OPEN, 0, 0);
    }

    /** The bytes of the files in the data-log directory (a few files: one listing); 0 if it cannot be read just now. */
    private long logBytes() {
        long sum = 0;
        try (Stream<Path> files = Files.list(dataDir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                try {
                    sum += Files.isRegularFile(f) ? Files.size(f) : 0;
                } catch (IOException e) {
                    // deleted while listed (a log compacted away): it takes no bytes now
                }
            }
        } catch (IOException | UncheckedIOException e) {
            return 0;
        }
        return sum;
    }

    /** Stops measuring (the worker is stopping); {@link #report()} then returns the last figures. */
    @Override
    public void close() {
        measurer.shutdownNow();
    }
}
