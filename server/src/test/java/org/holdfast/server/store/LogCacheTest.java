package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store cache ({@link LogCache}) with a real data store and S3Proxy: uploaded local logs
 * and fetched ranges stay within the limit, least recently used first out; eviction never loses a
 * block (every block reads back byte-identical through ranges); the active log and logs not
 * confirmed uploaded are never evicted; a restart counts what is on disk and trims it; a range of a
 * confirmed log whose object is gone reads as corrupt data naming the key.
 */
class LogCacheTest {
    private static final int BS = ArchiveFixture.BS;
    private static final int RANGE = 16 << 10;

    @TempDir
    Path dir;

    private ArchiveFixture f;

    @BeforeEach
    void open() throws Exception {
        f = new ArchiveFixture(dir);
    }

    @AfterEach
    void close() throws Exception {
        f.close();
    }

    private DataStore.Settings settings() {
        return f.settings();
    }

    private LogArchive archive(long limit) {
        return f.archive("n1", new LogCache.Settings(limit, RANGE, false, 2, 4 * RANGE));
    }

    private static long[] write(DataStore store, byte[][] payloads, long seed) throws Exception {
        return ArchiveFixture.write(store, payloads, seed);
    }

    private static void assertReads(DataStore store, long[] pbns, byte[][] payloads, Random order) {
        Integer[] idx = new Integer[pbns.length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        java.util.Collections.shuffle(Arrays.asList(idx), order);
        StoredBlock b = new StoredBlock();
        for (int i : idx) {
            store.read(pbns[i], b);
            assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength()))
                    .as("block %d (pbn %d)", i, pbns[i]).isEqualTo(payloads[i]);
        }
    }

    /** Bytes the cache counts: sealed local logs confirmed uploaded plus range files. */
    private long cachedOnDisk(DataStore store, LogArchive archive) throws Exception {
        long sum = 0;
        int below = store.compactableBelow();
        try (Stream<Path> s = Files.list(store.dir())) {
            for (Path p : s.toList()) {
                int id = DataLog.parseId(p.getFileName().toString());
                if (id >= 0 && id < below && archive.isUploaded(id)) {
                    sum += Files.size(p);
                }
            }
        }
        try (Stream<Path> s = Files.list(store.dir().resolve(LogArchive.RANGES_DIR))) {
            for (Path p : s.toList()) {
                sum += Files.size(p);
            }
        }
        return sum;
    }

    private static long localLogs(DataStore store) throws Exception {
        try (Stream<Path> s = Files.list(store.dir())) {
            return s.filter(p -> DataLog.parseId(p.getFileName().toString()) >= 0).count();
        }
    }

    @Test
    void read_manyLogsThroughASmallCache_withinLimitEveryBlockByteIdentical() throws Exception {
        long limit = 8 * RANGE; // two 64 KiB logs' worth: far less than the 20 logs written
        byte[][] payloads = new byte[300][];
        try (LogArchive archive = archive(limit); DataStore store = DataStore.open(settings(), f.db, archive)) {
            long[] pbns = write(store, payloads, 1);
            archive.awaitUploads(60_000);
            archive.cache().awaitEvictions(10_000);
            assertThat(cachedOnDisk(store, archive)).as("uploaded logs evicted down to the limit").isLessThanOrEqualTo(limit);
            assertThat(localLogs(store)).as("most sealed logs left the local disk").isLessThan(5);
            assertThat(store.dir().resolve(DataLog.fileName(store.stats().activeLogId()))).as("the active log stays").exists();

            assertReads(store, pbns, payloads, new Random(2)); // random order: ranges fetched, evicted, fetched again
            assertReads(store, pbns, payloads, new Random(3));
            archive.cache().awaitEvictions(10_000);
            LogCache.Stats st = archive.cache().stats();
            assertThat(st.misses()).as("ranges fetched on demand").isPositive();
            assertThat(st.rangeGets()).isEqualTo(st.misses());
            assertThat(st.evictions()).as("logs and ranges evicted").isGreaterThan(20);
            assertThat(st.cachedBytes()).isLessThanOrEqualTo(limit);
            assertThat(cachedOnDisk(store, archive)).as("the disk holds what the cache counts").isLessThanOrEqualTo(limit);
            assertThat(archive.stats().requests().getBytes()).isEqualTo(st.bytesFetched());
            assertThat(archive.stats().logsFetched()).as("no whole log downloaded").isZero();
        }
    }

    @Test
    void read_rangeCachedAfterAMiss_isAHitWithoutAnotherGet() throws Exception {
        byte[][] payloads = new byte[60][];
        try (LogArchive archive = archive(64 << 20); DataStore store = DataStore.open(settings(), f.db, archive)) {
            long[] pbns = write(store, payloads, 4);
            archive.awaitUploads(60_000);
        }
        Files.delete(dir.resolve("data").resolve(DataLog.fileName(1)));
        try (LogArchive archive = archive(64 << 20); DataStore store = DataStore.open(settings(), f.db, archive)) {
            long[] pbns = new long[payloads.length];
            for (int i = 0; i < pbns.length; i++) {
                pbns[i] = i + 1; // dense from 1: the first 15 lie in log 1
            }
            StoredBlock b = new StoredBlock();
            store.read(pbns[0], b);
            assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + BS)).isEqualTo(payloads[0]);
            long gets = archive.stats().requests().gets();
            assertThat(archive.cache().stats().misses()).isEqualTo(1);
            store.read(pbns[1], b); // same 16 KiB range
            assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + BS)).isEqualTo(payloads[1]);
            assertThat(archive.stats().requests().gets()).as("served from the cached range").isEqualTo(gets);
            assertThat(archive.cache().stats().hits()).isPositive();
            assertThat(dir.resolve("data").resolve(DataLog.fileName(1))).as("no whole download").doesNotExist();
        }
    }

    @Test
    void evict_storeUnreachable_logsNotConfirmedStayWhateverTheLimit() throws Exception {
        byte[][] payloads = new byte[100][];
        try (LogArchive archive = archive(4 * RANGE); DataStore store = DataStore.open(settings(), f.db, archive)) {
            f.s3.close(); // uploads fail from here on
            long[] pbns = write(store, payloads, 5);
            archive.awaitUploads(60_000);
            archive.cache().awaitEvictions(10_000);
            assertThat(archive.stats().uploadFailures()).isPositive();
            int sealed = store.compactableBelow() - 1;
            assertThat(localLogs(store)).as("every sealed log and the active one stay").isEqualTo(sealed + 1);
            assertReads(store, pbns, payloads, new Random(6));
            assertThat(archive.cache().stats().evictions()).isZero();
        } finally {
            f.s3 = S3ProxyFixture.start(dir.resolve("s3-2")); // for close()
        }
    }

    @Test
    void open_smallerLimitThanOnDisk_trimmedAtStartAndBlocksStillRead() throws Exception {
        byte[][] payloads = new byte[200][];
        long[] pbns;
        try (LogArchive archive = archive(64 << 20); DataStore store = DataStore.open(settings(), f.db, archive)) {
            pbns = write(store, payloads, 7);
            archive.awaitUploads(60_000);
            assertThat(archive.cache().stats().evictions()).isZero();
        }
        // every sealed log is now cache; and one wiped, so that a range of it is cached too
        Files.delete(dir.resolve("data").resolve(DataLog.fileName(2)));
        try (LogArchive archive = archive(64 << 20); DataStore store = DataStore.open(settings(), f.db, archive)) {
            store.read(pbns[20], new StoredBlock());
            archive.cache().awaitEvictions(10_000); // the range file is written on the cache's writer thread
            assertThat(Files.list(dir.resolve("data").resolve(LogArchive.RANGES_DIR)).count()).isEqualTo(1);
        }
        long limit = 6 * RANGE;
        try (LogArchive archive = archive(limit); DataStore store = DataStore.open(settings(), f.db, archive)) {
            archive.cache().awaitEvictions(10_000);
            assertThat(cachedOnDisk(store, archive)).as("trimmed to the new limit at open").isLessThanOrEqualTo(limit);
            assertThat(archive.cache().stats().cachedBytes()).isLessThanOrEqualTo(limit);
            assertReads(store, pbns, payloads, new Random(8));
        }
    }

    @Test
    void read_confirmedLogsObjectGone_corruptDataNamingTheKey() throws Exception {
        byte[][] payloads = new byte[40][];
        try (LogArchive archive = archive(64 << 20); DataStore store = DataStore.open(settings(), f.db, archive)) {
            write(store, payloads, 9);
            archive.awaitUploads(60_000);
        }
        Files.delete(dir.resolve("data").resolve(DataLog.fileName(1)));
        String key;
        try (ObjectStore raw = S3ObjectStore.open(f.s3.settings("t/"))) {
            key = raw.list("n1/logs/00000001-").get(0);
            raw.delete(key);
        }
        try (LogArchive archive = archive(64 << 20); DataStore store = DataStore.open(settings(), f.db, archive)) {
            assertThatThrownBy(() -> store.read(1, new StoredBlock()))
                    .isInstanceOf(CorruptDataException.class).hasMessageContaining("is gone").hasMessageContaining(key);
        }
    }
}
