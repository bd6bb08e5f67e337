package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.TreeSet;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreUnavailableException;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.SlowDownProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read of a data log whose local file is gone, from its object through a proxy that fails the
 * store's requests: only the store's definite "no such key" may mark the log's blocks bad
 * ({@link MissingLogSweep}); a 503, a reset connection or a 404 from something that is not the
 * store is an outage, marks nothing, and the read succeeds once the store answers again.
 */
class MissingLogSweepFaultsTest {
    @TempDir
    Path dir;

    private ArchiveFixture f;
    private SlowDownProxy proxy;
    private TreeSet<Long> inLogOne;

    @BeforeEach
    void start() throws Exception {
        f = new ArchiveFixture(dir);
        proxy = new SlowDownProxy(f.s3.port());
        try (LogArchive archive = f.archive("n1", LogCache.Settings.defaults());
                DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            ArchiveFixture.write(store, new byte[40][], 11);
            archive.awaitUploads(30_000);
            assertThat(archive.isUploaded(1)).isTrue();
            inLogOne = new TreeSet<>();
            store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                if (logId == 1) {
                    inLogOne.add(pbn);
                }
                return true;
            });
        }
        Files.delete(dir.resolve("data").resolve(DataLog.fileName(1))); // evicted: reads go to the object
        Path ranges = dir.resolve("data").resolve(LogArchive.RANGES_DIR);
        if (Files.isDirectory(ranges)) {
            try (var files = Files.list(ranges)) {
                for (Path p : files.toList()) {
                    Files.delete(p); // a cold cache
                }
            }
        }
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        f.close();
    }

    /** An archive whose requests go through the proxy (opened, and its probe passed, before any fault is set). */
    private LogArchive archive() {
        return new LogArchive(S3ObjectStore.open(f.s3.settings(URI.create("http://127.0.0.1:" + proxy.port()), "t/")), "n1",
                LogCache.Settings.defaults());
    }

    private static void assertNothingMarked(DataStore store) {
        assertThat(store.badBlocks().count()).as("no block marked bad").isZero();
        assertThat(store.missingLogsSwept()).as("no log swept").isZero();
    }

    @Test
    void read_everyRequest503_isAnOutage_marksNothing_thenReadsOnceTheStoreAnswers() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.faults(new SlowDownProxy.Faults(1.0, 0, 0, 0, Duration.ZERO, 1));
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(ObjectStoreUnavailableException.class).isNotInstanceOf(CorruptDataException.class);
            assertNothingMarked(store);
            proxy.faults(null);
            StoredBlock b = new StoredBlock();
            store.read(inLogOne.first(), b);
            assertThat(b.storedLength).isPositive();
            assertNothingMarked(store);
        }
    }

    @Test
    void read_everyConnectionReset_isAnOutage_marksNothing() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.faults(new SlowDownProxy.Faults(0, 1.0, 0, 0, Duration.ZERO, 2));
            assertThatThrownBy(() -> store.read(inLogOne.last(), new StoredBlock()))
                    .isInstanceOf(ObjectStoreUnavailableException.class);
            assertNothingMarked(store);
            proxy.faults(null);
            store.read(inLogOne.last(), new StoredBlock());
            assertNothingMarked(store);
        }
    }

    @Test
    void read_answersCutOffInTheirHeaders_isAnOutage_marksNothing() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.cutNext(100);
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(ObjectStoreUnavailableException.class);
            assertNothingMarked(store);
            proxy.cutNext(0);
            store.read(inLogOne.first(), new StoredBlock());
            assertNothingMarked(store);
        }
    }

    @Test
    void read_404FromAGatewayNotTheStore_isNotTakenForAMissingLog_marksNothing() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.notFoundNext(100, "text/html", "<html><body><h1>404 Not Found</h1>nginx</body></html>");
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(ObjectStoreUnavailableException.class).hasMessageContaining("404")
                    .hasMessageContaining("NoSuchKey");
            assertNothingMarked(store);
            proxy.notFoundNext(0, "text/html", "");
            store.read(inLogOne.first(), new StoredBlock());
            assertNothingMarked(store);
        }
    }

    @Test
    void read_404WithAnErrorOtherThanNoSuchKey_isNotTakenForAMissingLog_marksNothing() throws Exception {
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.notFoundNext(100, "application/xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchUpload</Code>"
                    + "<Message>not here</Message></Error>");
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(ObjectStoreUnavailableException.class);
            assertNothingMarked(store);
        }
    }

    @Test
    void read_objectReallyGone_storeSaysNoSuchKey_marksEveryBlockOfTheLog() throws Exception {
        try (ObjectStore raw = S3ObjectStore.open(f.s3.settings("t/"))) {
            for (String k : raw.list("n1/logs/00000001-")) {
                raw.delete(k);
            }
        }
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            proxy.failNext(2); // a 503 first, retried, then the store's own answer
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(CorruptBlockException.class).hasMessageContaining("is gone from the object store");
            assertThat(store.badBlocks().count()).isEqualTo(inLogOne.size());
            assertThat(store.missingLogsSwept()).isEqualTo(1);
        }
    }

    @Test
    void read_prefixNoLongerThisNodes_noConfirmedLogAnswers_isAnOutage_marksNothing() throws Exception {
        // the bucket answers NoSuchKey for every log: not lost logs, the wrong place (a changed prefix or bucket)
        try (LogArchive wrong = new LogArchive(S3ObjectStore.open(f.s3.settings("elsewhere/")), "n1", LogCache.Settings.defaults());
                DataStore store = DataStore.open(f.settings(), f.db, wrong)) {
            assertThat(wrong.uploadedIds()).as("other confirmed logs to ask").hasSizeGreaterThan(1);
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(ObjectStoreUnavailableException.class).hasMessageContaining("holdfast.store.s3.bucket, prefix or endpoint")
                    .hasMessageContaining("nothing was marked bad");
            assertNothingMarked(store);
        }
        try (LogArchive archive = archive(); DataStore store = DataStore.open(f.settings(), f.db, archive)) {
            StoredBlock b = new StoredBlock();
            store.read(inLogOne.first(), b);
            assertThat(b.storedLength).isPositive();
            assertNothingMarked(store);
        }
    }
}
