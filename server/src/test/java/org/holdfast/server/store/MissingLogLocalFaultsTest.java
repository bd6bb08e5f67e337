package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read of a sealed data log whose local file the file system cannot answer for (an I/O error, a
 * permission, a stale handle; here a symbolic link loop, as root tests cannot take a permission
 * away): only a definite "no such file" is a missing log whose blocks are all marked bad
 * ({@link MissingLogSweep}); any other failure fails the read as an I/O error, marks nothing, and
 * the log reads again once the file system answers.
 */
class MissingLogLocalFaultsTest {
    @TempDir
    Path dir;

    private MetadataDb db;
    private TreeSet<Long> inLogOne;
    private Path logOne;

    private DataStore.Settings settings() {
        return new DataStore.Settings(dir.resolve("data"), 64 << 10, FsyncPolicy.COMMIT, 64, 0);
    }

    @BeforeEach
    void start() throws Exception {
        db = MetadataDb.open(dir.resolve("catalog"));
        try (DataStore store = DataStore.open(settings(), db)) {
            ArchiveFixture.write(store, new byte[40][], 5);
            inLogOne = new TreeSet<>();
            store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                if (logId == 1) {
                    inLogOne.add(pbn);
                }
                return true;
            });
        }
        assertThat(inLogOne).hasSizeGreaterThan(2);
        logOne = dir.resolve("data").resolve(DataLog.fileName(1));
    }

    @AfterEach
    void stop() {
        db.close();
    }

    @Test
    void read_logFileTheFileSystemCannotAnswerFor_isAnIoError_marksNothing_thenReadsAgain() throws Exception {
        Path aside = dir.resolve("log-1-aside");
        Files.move(logOne, aside);
        Files.createSymbolicLink(logOne, logOne); // stat fails with ELOOP: neither there nor known to be gone
        try (DataStore store = DataStore.open(settings(), db)) {
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock()))
                    .isInstanceOf(StoreException.class).isNotInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("cannot tell whether");
            assertThat(store.badBlocks().count()).as("nothing marked bad").isZero();
            assertThat(store.missingLogsSwept()).isZero();

            Files.delete(logOne);
            Files.move(aside, logOne); // the file system answers again
            StoredBlock b = new StoredBlock();
            store.read(inLogOne.first(), b);
            assertThat(b.storedLength).isPositive();
            assertThat(store.badBlocks().count()).isZero();
        }
    }

    @Test
    void read_logFileReallyGone_marksEveryBlockOfTheLog() throws Exception {
        Files.delete(logOne);
        try (DataStore store = DataStore.open(settings(), db)) {
            assertThatThrownBy(() -> store.read(inLogOne.first(), new StoredBlock())).isInstanceOf(CorruptBlockException.class)
                    .hasMessageContaining("data log is missing");
            assertThat(store.badBlocks().count()).isEqualTo(inLogOne.size());
            assertThat(store.missingLogsSwept()).isEqualTo(1);
        }
    }
}
