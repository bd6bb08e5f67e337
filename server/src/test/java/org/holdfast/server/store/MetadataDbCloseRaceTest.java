package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.holdfast.server.store.MetadataDb.Column;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalog's close against what the close test does not cover: a scan whose iterator is open
 * when the close begins (its native state points into the database: freeing the database under it
 * crashed the JVM), a catalog backup racing the close, and a close whose flush did not run (every
 * acknowledged write, synced or not, replayed from the write-ahead log at the next open).
 */
class MetadataDbCloseRaceTest {
    @TempDir
    Path dir;

    @Test
    void close_whileAnIteratorIsOpen_waitsForItAndTheNextStepIsRefused() throws Exception {
        Path catalog = dir.resolve("catalog");
        MetadataDb db = MetadataDb.open(catalog);
        try (MetadataBatch b = new MetadataBatch()) {
            for (int i = 0; i < 100; i++) {
                db.put(b, Column.MAP, key(i), key(i));
            }
            db.write(b, true);
        }
        ExecutorService closer = Executors.newSingleThreadExecutor();
        try {
            Future<?> closing;
            try (CheckedIterator it = db.iterator(Column.MAP)) {
                it.seekToFirst();
                assertThat(it.isValid()).isTrue();
                closing = closer.submit(db::close);
                Thread.sleep(300);
                assertThat(closing.isDone()).as("close() waits while a scan holds an iterator into the database").isFalse();
                assertThatThrownBy(it::next).as("the scan's next step after the close began is refused")
                        .isInstanceOf(CatalogClosedException.class);
            }
            closing.get(10, TimeUnit.SECONDS); // the iterator closed: the catalog closes at once
            assertThat(db.isClosed()).isTrue();
        } finally {
            closer.shutdownNow();
        }
        assertThatThrownBy(() -> db.iterator(Column.MAP)).isInstanceOf(CatalogClosedException.class);
        try (MetadataDb reopened = MetadataDb.open(catalog); CheckedIterator it = reopened.iterator(Column.MAP)) {
            int n = 0;
            for (it.seekToFirst(); it.isValid(); it.next()) {
                n++;
            }
            assertThat(n).isEqualTo(100);
        }
    }

    @Test
    void catalogBackup_afterCloseBegan_refusedAndWritesNoBackup() throws Exception {
        MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, Column.META, key(1), key(1));
            db.write(b, true);
        }
        db.close();
        assertThatThrownBy(() -> db.withRocks(rocks -> rocks.getLatestSequenceNumber()))
                .as("the raw database is reachable only as a counted call").isInstanceOf(CatalogClosedException.class);
        assertThatThrownBy(db::verifyChecksums).isInstanceOf(CatalogClosedException.class);
    }

    @Test
    void close_withTheFlushSkipped_everyAcknowledgedWriteReplayedFromTheWal() throws Exception {
        Path catalog = dir.resolve("catalog");
        MetadataDb db = MetadataDb.open(catalog, List.of("extra"), true);
        for (int i = 0; i < 500; i++) {
            if (i % 3 == 0) {
                db.put(db.handle("extra"), key(i), key(i)); // unsynced single put
            } else {
                try (MetadataBatch b = new MetadataBatch()) {
                    db.put(b, i % 2 == 0 ? Column.MAP : Column.SNAPSHOTS, key(i), key(i));
                    db.write(b, i % 5 == 0);
                }
            }
        }
        db.flushAtClose = false;
        db.close();
        assertThat(walBytes(catalog)).as("the flush was skipped: the data is only in the write-ahead log").isPositive();
        try (MetadataDb reopened = MetadataDb.open(catalog, List.of("extra"), true)) {
            for (int i = 0; i < 500; i++) {
                byte[] got = i % 3 == 0 ? reopened.get(reopened.handle("extra"), key(i))
                        : reopened.get(i % 2 == 0 ? Column.MAP : Column.SNAPSHOTS, key(i));
                assertThat(got).as("acknowledged write %d after the replay", i).isEqualTo(key(i));
            }
        }
    }

    @Test
    void close_onAnInterruptedThread_stillWaitsForTheRunningScanAndClosesInOrder() throws Exception {
        Path catalog = dir.resolve("catalog");
        MetadataDb db = MetadataDb.open(catalog);
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, Column.META, key(1), key(1));
            db.write(b, true);
        }
        CheckedIterator it = db.iterator(Column.META);
        Thread scan = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            it.close();
        });
        scan.start();
        Thread.currentThread().interrupt(); // a stop path that was itself interrupted
        try {
            db.close();
            assertThat(Thread.interrupted()).as("the interrupt is kept for the caller").isTrue();
        } finally {
            Thread.interrupted();
            scan.join();
        }
        assertThat(walBytes(catalog)).as("the close waited for the scan and flushed, not left the database open").isZero();
        try (MetadataDb reopened = MetadataDb.open(catalog)) {
            assertThat(reopened.get(Column.META, key(1))).isEqualTo(key(1));
        }
    }

    private static long walBytes(Path db) throws Exception {
        try (Stream<Path> files = Files.list(db)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private static byte[] key(int i) {
        return ByteBuffer.allocate(8).putLong(i).array();
    }
}
