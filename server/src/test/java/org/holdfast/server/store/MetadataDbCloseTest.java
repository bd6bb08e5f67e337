package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.holdfast.server.store.MetadataDb.Column;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Checkpoint;
import org.rocksdb.FlushOptions;

/**
 * Closing the catalog while it is busy (the server stopped with SIGTERM during a backup): close
 * finishes within a bound, no write runs into the closed database (each is refused with a clear
 * error), and every write acknowledged before the close is there after a reopen. A server hung in
 * {@code MetadataDb.close} (RocksDB's waiting manual flush with min_write_buffer_number_to_merge 2,
 * facebook/rocksdb#13280) is what this guards against; the option itself is checked on disk.
 */
class MetadataDbCloseTest {
    /** Far above a healthy close (well under a second here) and far below a hang. */
    private static final long CLOSE_BOUND_SECONDS = 15;
    private static final Column[] WRITTEN = {Column.MAP, Column.FPINDEX, Column.LOCATIONS, Column.SNAPSHOTS, Column.META};
    /** Rounds of the stress; more with -Dholdfast.test.close-stress-rounds=N (the reproduction attempt). */
    private static final int ROUNDS = Integer.getInteger("holdfast.test.close-stress-rounds", 2);

    @TempDir
    Path dir;

    @Test
    void close_underConcurrentWritesFlushesAndCheckpoints_finishesInBoundAndLosesNoAcknowledgedWrite() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            Path catalog = dir.resolve("catalog-" + round);
            int writers = 4;
            AtomicLong[] acked = new AtomicLong[writers];
            AtomicReference<Throwable> unexpected = new AtomicReference<>();
            AtomicLong refused = new AtomicLong();
            MetadataDb db = MetadataDb.open(catalog, List.of(), true);
            ExecutorService pool = Executors.newFixedThreadPool(writers + 3);
            AtomicBoolean stopSide = new AtomicBoolean();
            List<Future<?>> side = new ArrayList<>();
            try {
                for (int w = 0; w < writers; w++) {
                    acked[w] = new AtomicLong(-1);
                    int writer = w;
                    pool.submit(() -> write(db, writer, writer % 2 == 0, acked[writer], refused, unexpected));
                }
                // Manual flushes on two threads (two concurrent manual flushes of one column family
                // are an upstream trigger) and a checkpoint (what a catalog backup does, flush included).
                for (int f = 0; f < 2; f++) {
                    int seed = f;
                    side.add(pool.submit(() -> flushes(db, seed, stopSide, unexpected)));
                }
                side.add(pool.submit(() -> checkpoints(db, catalog.resolveSibling("cp-" + catalog.getFileName()), stopSide, unexpected)));
                Thread.sleep(300);
                // The server stops catalog backups (and everything else that flushes) before the
                // catalog closes; the writers keep going into the close.
                stopSide.set(true);
                for (Future<?> f : side) {
                    f.get(CLOSE_BOUND_SECONDS, TimeUnit.SECONDS);
                }
                Thread.sleep(50);
                long start = System.nanoTime();
                Future<?> closing = Executors.newSingleThreadExecutor(r -> daemon(r, "closer")).submit(db::close);
                closing.get(CLOSE_BOUND_SECONDS, TimeUnit.SECONDS); // a hang fails here (TimeoutException)
                System.out.printf("[close] round %d: close took %d ms%n", round, (System.nanoTime() - start) / 1_000_000);
            } finally {
                pool.shutdown();
                assertThat(pool.awaitTermination(CLOSE_BOUND_SECONDS, TimeUnit.SECONDS)).as("writers stopped after the close").isTrue();
            }
            assertThat(unexpected.get()).as("no write failed other than refused by the close").isNull();
            assertThat(refused.get()).as("each writer met the close and was refused").isEqualTo(writers);
            assertThat(walBytes(catalog)).as("round %d: the close's flush finished, so the write-ahead log is empty at rest", round).isZero();
            try (MetadataDb reopened = MetadataDb.open(catalog, List.of(), true)) {
                for (int w = 0; w < writers; w++) {
                    assertThat(acked[w].get()).as("writer %d wrote something", w).isGreaterThan(10);
                    for (long seq = 0; seq <= acked[w].get(); seq++) {
                        Column c = WRITTEN[(int) (seq % WRITTEN.length)];
                        assertThat(reopened.get(c, key(w, seq))).as("round %d, writer %d, acknowledged write %d in %s", round, w, seq, c)
                                .isEqualTo(value(w, seq));
                    }
                }
            }
        }
    }

    @Test
    void writeReadAndIterate_afterClose_refusedWithClearErrorAndChangeNothing() {
        Path catalog = dir.resolve("catalog");
        MetadataDb db = MetadataDb.open(catalog);
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, Column.META, key(0, 0), value(0, 0));
            db.write(b, true);
        }
        db.close();
        try (MetadataBatch b = new MetadataBatch()) {
            // adding to a batch reads the column family handle, which close() freed (the JVM crashed here before)
            assertThatThrownBy(() -> db.put(b, Column.META, key(0, 1), value(0, 1))).isInstanceOf(CatalogClosedException.class)
                    .hasMessageContaining("the server is stopping").hasMessageContaining("changed nothing");
            assertThatThrownBy(() -> db.delete(b, Column.META, key(0, 0))).isInstanceOf(CatalogClosedException.class);
            assertThat(b.count()).isZero();
            assertThatThrownBy(() -> db.write(b, true)).isInstanceOf(CatalogClosedException.class);
        }
        assertThat(db.property("rocksdb.estimate-num-keys")).as("a late metrics scrape gets nothing, and no crash").isNull();
        assertThatThrownBy(() -> db.put(db.handle(Column.JOBS), key(0, 2), value(0, 2))).isInstanceOf(CatalogClosedException.class);
        assertThatThrownBy(() -> db.get(Column.META, key(0, 0))).isInstanceOf(CatalogClosedException.class);
        assertThatThrownBy(() -> db.iterator(Column.META)).isInstanceOf(CatalogClosedException.class);
        assertThatThrownBy(db::syncWal).isInstanceOf(CatalogClosedException.class);
        db.close(); // idempotent
        try (MetadataDb reopened = MetadataDb.open(catalog)) {
            assertThat(reopened.get(Column.META, key(0, 0))).isEqualTo(value(0, 0));
            assertThat(reopened.get(Column.META, key(0, 1))).isNull();
            assertThat(reopened.get(Column.JOBS, key(0, 2))).isNull();
        }
    }

    @Test
    void everyColumnFamily_mergesNoMemtables_catalogAndExactFallback() throws Exception {
        MetadataDb.open(dir.resolve("catalog"), List.of("extra"), true).close();
        List<String> catalog = mergeSettings(dir.resolve("catalog"));
        // default, every built-in column family and the extra one
        assertThat(catalog).hasSize(Column.values().length + 2).containsOnly("1");
        new ExactFallbackMap(dir.resolve("fallback")).close();
        assertThat(mergeSettings(dir.resolve("fallback"))).isNotEmpty().containsOnly("1");
    }

    private static long walBytes(Path db) throws Exception {
        try (Stream<Path> files = Files.list(db)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    /** min_write_buffer_number_to_merge of every column family in the newest OPTIONS file RocksDB wrote. */
    private static List<String> mergeSettings(Path db) throws Exception {
        Path newest;
        try (Stream<Path> files = Files.list(db)) {
            newest = files.filter(p -> p.getFileName().toString().startsWith("OPTIONS-")).max(Path::compareTo).orElseThrow();
        }
        Matcher m = Pattern.compile("(?m)^\\s*min_write_buffer_number_to_merge=(\\d+)$").matcher(Files.readString(newest));
        List<String> values = new ArrayList<>();
        while (m.find()) {
            values.add(m.group(1));
        }
        return values;
    }

    private static void write(MetadataDb db, int writer, boolean sync, AtomicLong acked, AtomicLong refused,
                              AtomicReference<Throwable> unexpected) {
        try {
            for (long seq = 0; ; seq++) {
                Column c = WRITTEN[(int) (seq % WRITTEN.length)];
                if (seq % 7 == 3) {
                    db.put(db.handle(c), key(writer, seq), value(writer, seq)); // single unsynced put, as JobStore does
                } else {
                    try (MetadataBatch b = new MetadataBatch()) {
                        db.put(b, c, key(writer, seq), value(writer, seq));
                        db.write(b, sync);
                    }
                }
                acked.set(seq);
            }
        } catch (CatalogClosedException e) {
            refused.incrementAndGet();
        } catch (Throwable t) {
            unexpected.compareAndSet(null, t);
        }
    }

    private static void flushes(MetadataDb db, int seed, AtomicBoolean stop, AtomicReference<Throwable> unexpected) {
        Random random = new Random(seed);
        try (FlushOptions wait = new FlushOptions().setWaitForFlush(true)) {
            while (!stop.get()) {
                db.withRocks(rocks -> {
                    rocks.flush(wait, db.handle(WRITTEN[random.nextInt(WRITTEN.length)]));
                    return null;
                });
            }
        } catch (Throwable t) {
            unexpected.compareAndSet(null, t);
        }
    }

    private static void checkpoints(MetadataDb db, Path base, AtomicBoolean stop, AtomicReference<Throwable> unexpected) {
        try {
            for (int i = 0; !stop.get(); i++) {
                String to = base.resolveSibling(base.getFileName() + "-" + i).toString();
                db.withRocks(rocks -> {
                    try (Checkpoint cp = Checkpoint.create(rocks)) {
                        cp.createCheckpoint(to);
                    }
                    return null;
                });
            }
        } catch (Throwable t) {
            unexpected.compareAndSet(null, t);
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true); // a hung close must not keep the test JVM alive
        return t;
    }

    private static byte[] key(int writer, long seq) {
        return ByteBuffer.allocate(12).putInt(writer).putLong(seq).array();
    }

    private static byte[] value(int writer, long seq) {
        return ("writer " + writer + " write " + seq + " " + "x".repeat(100)).getBytes(StandardCharsets.UTF_8);
    }
}
