package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LogArchive} with a real data store and S3Proxy: the crash cases of an upload (confirmation
 * lost after the PUT; the store unreachable) never lose a local log or confirm a log that is not in
 * the store, and a confirmed log whose object is gone reads as corrupt data.
 */
class LogArchiveTest {
    @TempDir
    Path dir;

    private ArchiveFixture f;
    private S3ProxyFixture s3;
    private MetadataDb db;

    @BeforeEach
    void start() throws Exception {
        f = new ArchiveFixture(dir);
        s3 = f.s3;
        db = f.db;
    }

    @AfterEach
    void stop() throws Exception {
        f.s3 = s3;
        f.close();
    }

    private DataStore.Settings settings() {
        return f.settings();
    }

    private LogArchive archive() {
        return archive("n1");
    }

    private LogArchive archive(String node) {
        return f.archive(node, LogCache.Settings.defaults());
    }

    /** Appends {@code n} random raw blocks and syncs; with 64 KiB logs every 15 blocks roll a log. */
    private static long[] write(DataStore store, int n, long seed) throws Exception {
        return ArchiveFixture.write(store, new byte[n][], seed);
    }

    @Test
    void confirmationLostAfterThePut_nextStartTakesTheExistingObjectAsOurs() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(settings(), db, archive)) {
            write(store, 40, 1);
            archive.awaitUploads(30_000);
            assertThat(archive.isUploaded(1)).isTrue();
            assertThat(archive.stats().logsUploaded()).isEqualTo(2);
        }
        // a crash between the PUT and the synced confirmation: the object exists, the catalog does not know
        try (MetadataBatch b = new MetadataBatch()) {
            db.delete(b, db.handle(MetadataDb.Column.META), MetadataDb.bytes(UploadRecords.META_UPLOADED + "00000001"));
            db.write(b, true);
        }
        try (LogArchive archive = archive(); DataStore store = DataStore.open(settings(), db, archive)) {
            archive.awaitUploads(30_000);
            assertThat(archive.isUploaded(1)).as("412 with the same size: confirmed as ours").isTrue();
            assertThat(archive.stats().requests().heads()).isEqualTo(1);
            assertThat(archive.stats().logsUploaded()).isEqualTo(1);
        }
    }

    @Test
    void storeUnreachable_uploadFailsCounted_logKeptAndNotConfirmed() throws Exception {
        assumeFalse(s3.external(), "an external store (mvn -Pceph) cannot be stopped by the test");
        try (LogArchive archive = archive(); DataStore store = DataStore.open(settings(), db, archive)) {
            s3.close(); // the store goes away after the probe
            write(store, 40, 2);
            archive.awaitUploads(30_000);
            assertThat(archive.stats().uploadFailures()).isPositive();
            assertThat(archive.isUploaded(1)).isFalse();
            assertThat(store.dir().resolve(DataLog.fileName(1))).exists();
        } finally {
            s3 = S3ProxyFixture.start(dir.resolve("s3-2")); // for stop()
        }
    }

    @Test
    void wipedLogFetchedAfterANodeRename_confirmedObjectGone_readIsCorruptDataNotAnOutage() throws Exception {
        long[] pbns;
        try (LogArchive archive = archive(); DataStore store = DataStore.open(settings(), db, archive)) {
            pbns = write(store, 40, 3);
            archive.awaitUploads(30_000);
            assertThat(archive.isUploaded(1)).isTrue();
        }
        Files.delete(dir.resolve("data").resolve(DataLog.fileName(1)));
        try (LogArchive archive = archive("renamed"); DataStore store = DataStore.open(settings(), db, archive)) {
            StoredBlock b = new StoredBlock();
            store.read(pbns[0], b);
            assertThat(archive.cache().stats().misses()).as("the wiped log read by range, from the key its upload recorded").isEqualTo(1);
            assertThat(archive.stats().requests().gets()).isEqualTo(1);
        }
        for (java.nio.file.Path p : Files.list(dir.resolve("data").resolve(LogArchive.RANGES_DIR)).toList()) {
            Files.delete(p); // a cold cache
        }
        try (ObjectStore raw = S3ObjectStore.open(s3.settings("t/"))) {
            for (String k : raw.list("n1/logs/00000001-")) {
                raw.delete(k);
            }
        }
        try (LogArchive archive = archive(); DataStore store = DataStore.open(settings(), db, archive)) {
            assertThatThrownBy(() -> store.read(pbns[0], new StoredBlock()))
                    .isInstanceOf(CorruptDataException.class).hasMessageContaining("is gone from the object store");
        }
    }

    /**
     * A confirmed log whose local file and object are both gone: a read of one of its blocks marks
     * every block of the log bad (not just the one read), once, and no block of another log.
     */
    @Test
    void confirmedObjectGone_readOfOneBlock_marksEveryBlockOfTheLogOnce_noneOfAnother() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(settings(), db, archive)) {
            write(store, 40, 4);
            archive.awaitUploads(30_000);
            assertThat(archive.isUploaded(1)).isTrue();
        }
        Files.delete(dir.resolve("data").resolve(DataLog.fileName(1)));
        try (ObjectStore raw = S3ObjectStore.open(s3.settings("t/"))) {
            for (String k : raw.list("n1/logs/00000001-")) {
                raw.delete(k);
            }
        }
        try (LogArchive archive = archive(); DataStore store = DataStore.open(settings(), db, archive)) {
            java.util.TreeSet<Long> inLogOne = new java.util.TreeSet<>();
            store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                if (logId == 1) {
                    inLogOne.add(pbn);
                }
                return true;
            });
            assertThat(inLogOne).hasSizeGreaterThan(2);
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(CorruptBlockException.class).hasMessageContaining("is gone from the object store");
            assertThat(store.badBlocks().all().stream().map(BadBlocks.BadBlock::pbn).toList())
                    .as("every block of log 1, none of logs 2 and 3").containsExactlyElementsOf(inLogOne);
            assertThat(store.missingLogsSwept()).isEqualTo(1);

            assertThatThrownBy(() -> store.read(inLogOne.last(), new StoredBlock())).isInstanceOf(CorruptBlockException.class);
            assertThat(store.missingLogsSwept()).as("a second read of the log does not sweep again").isEqualTo(1);
            assertThat(store.badBlocks().count()).isEqualTo(inLogOne.size());
        }
    }
}
