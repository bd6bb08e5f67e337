package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;

/**
 * A worker's store of the blocks of its PBN range (data on workers): a {@link DataStore} over the
 * range its master assigned, with its own metadata database, in {@code <data-dir>/range-data}
 * ({@code data/} and {@code catalog/} below it). Opened at the first registration that needs it and
 * kept across reconnections over the same range; a directory created for another range is refused
 * by the data store (it is another node's), and that refusal is what every request then hears. The
 * worker process owns it and closes it after its links.
 */
public final class WorkerRangeData implements AutoCloseable {
    /** Its directory's name in the worker's data directory. */
    public static final String DIRECTORY = "range-data";
    private final Path dir;
    private final DataStore.Settings settings;
    private MetadataDb db;
    // volatile: the heartbeat reads them without the lock, which a store being opened holds
    private volatile DataStore store;
    private PbnRange range;
    private volatile RuntimeException refusal;
    private boolean refusalReported;
    private boolean closed;
    // the heartbeat's figures, measured off the event loop: the store's next PBN waits for its append
    // lock (held across an append's fsync), and the size of the data logs is a listing of the disk
    private volatile Heartbeat.RangeData measured = notServing();
    private final AtomicBoolean measuring = new AtomicBoolean();
    private final ExecutorService measurer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "holdfast-range-data-report");
        t.setDaemon(true);
        return t;
    });

    /**
     * A store in {@code dir} ({@code <data-dir>/range-data}) with {@code settings} (their directory and
     * range are replaced: the logs go to {@code dir/data}, the range comes from the registration).
     */
    public WorkerRangeData(Path dir, DataStore.Settings settings) {
        this.dir = dir;
        this.settings = settings;
    }

    /** Its directory. */
    public Path dir() {
        return dir;
    }

    /**
     * The store over {@code r}: opened now unless it is open over {@code r} already (a store open over
     * another range is closed first).
     *
     * @throws RuntimeException the store's refusal (a directory recorded for another range, say), also for later calls over {@code r}
     */
    public synchronized DataStore claim(PbnRange r) {
        if (closed) {
            throw new IllegalStateException("the worker's range data in " + dir + " is closed: the worker is stopping");
        }
        if (r.equals(range)) {
            if (refusal != null) {
                throw refusal;
            }
            return store;
        }
        closeStore();
        range = r;
        MetadataDb opened = null;
        try {
            // the fsync policy rules the catalog's commits as on a standalone node's (CoreConfiguration)
            opened = MetadataDb.open(dir.resolve("catalog"), List.of(), settings.fsync().forces());
            DataStore s = DataStore.open(new DataStore.Settings(dir.resolve("data"), settings.rollBytes(), settings.fsync(),
                    settings.pbnReserveBatch(), settings.minFreeBytes(), r), opened);
            db = opened;
            store = s;
            measured = measure(); // on the claiming thread (the link's data lane), not the event loop
            return s;
        } catch (RuntimeException e) {
            if (opened != null) {
                opened.close();
            }
            refusal = e;
            measured = notServing();
            throw e;
        }
    }

    /**
     * True once per refusal of the store (the first caller that asks logs it; a worker that reconnects
     * over the same range does not log it again).
     */
    public synchronized boolean reportRefusal() {
        if (refusal == null || refusalReported) {
            return false;
        }
        refusalReported = true;
        return true;
    }

    /**
     * What the worker's heartbeat reports (cluster version 3): serving with the next PBN and the
     * bytes of the data logs on disk, refused, or not open yet. Never waits: it runs on the link's
     * event loop, which a store stuck in an append's fsync (or a slow disk listing) must not stall
     * (its dedup answers and heartbeats would stop, and the master would declare the worker lost).
     * It returns the figures measured last (at open, or after the previous heartbeat: they lag one
     * heartbeat interval) and has them measured again on a thread of their own.
     */
    public Heartbeat.RangeData report() {
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

    /** The figures as they stand; may wait for the store's append lock and the disk. */
    private Heartbeat.RangeData measure() {
        DataStore s = store;
        if (s != null) {
            return new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, s.nextPbn(), logBytes());
        }
        return notServing();
    }

    private Heartbeat.RangeData notServing() {
        return new Heartbeat.RangeData(refusal != null ? Heartbeat.RangeData.REFUSED : Heartbeat.RangeData.NOT_OPEN, 0, 0);
    }

    /** The bytes of the files in the data-log directory (a few files: one listing); 0 if it cannot be read just now. */
    private long logBytes() {
        long sum = 0;
        try (Stream<Path> files = Files.list(dir.resolve("data"))) {
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

    /** The store open now, or null. */
    public synchronized DataStore store() {
        return store;
    }

    private void closeStore() {
        if (store != null) {
            store.close();
            store = null;
        }
        if (db != null) {
            db.close();
            db = null;
        }
        range = null;
        refusal = null;
        refusalReported = false;
    }

    @Override
    public synchronized void close() {
        closed = true;
        measurer.shutdownNow();
        closeStore();
    }
}
