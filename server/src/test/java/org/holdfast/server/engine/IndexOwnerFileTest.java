package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.server.store.StoreException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whether a worker keeps its dedup index at a registration ({@link LazyDedupWorker#claim}): the
 * rule of the owner file, on files on disk. A container file stands for the index's content.
 */
class IndexOwnerFileTest {
    @TempDir
    Path dir;
    private Path index;
    private Path container;
    private LazyDedupWorker worker;

    @BeforeEach
    void index() throws Exception {
        index = dir.resolve("dedup-worker");
        container = Files.createDirectories(index.resolve("containers")).resolve("00000001.hfc");
        Files.writeString(container, "blocks this index has seen");
        worker = unopened(index);
    }

    private static LazyDedupWorker unopened(Path index) {
        return new LazyDedupWorker(0, index, () -> {
            throw new AssertionError("no call opens the engine here");
        });
    }

    private void owner(String content) throws Exception {
        Files.writeString(index.resolve(IndexOwnerFile.NAME), content);
    }

    private String owner() throws Exception {
        return Files.readString(index.resolve(IndexOwnerFile.NAME));
    }

    /**
     * Claims the index (which holds the container) for worker {@code id} at {@code epoch} and checks that
     * it was started over for {@code why} (or kept, for null) and now names both.
     */
    private void claims(long id, long epoch, StartOverReason why) throws Exception {
        assertThat(worker.claim(id, epoch)).as("why started over").isEqualTo(why);
        assertThat(Files.exists(container)).as("the index's content is there").isEqualTo(why == null);
        assertThat(owner()).isEqualTo(id + " " + epoch + "\n");
    }

    @Test
    void claim_indexBuiltForAnotherWorkerId_startsOverAndRecordsTheNewOwner() throws Exception {
        owner("1 4\n"); // this host was worker 1; an admin replaced lost worker 2 with it: registered as 2 at epoch 5
        claims(2, 5, StartOverReason.OTHER_ID);
        assertThat(index.resolve(IndexOwnerFile.NAME + ".tmp")).doesNotExist();
    }

    @Test
    void claim_indexOfThisWorkerAtALaterEpoch_isKept() throws Exception {
        owner("2 5\n");
        claims(2, 6, null);
    }

    @Test
    void claim_noOwnerFile_keepsTheIndexOfAnUpgradedWorkerAndWritesTheFile() throws Exception {
        claims(3, 4, null);
        assertThat(worker.claim(4, 9)).as("from now on another id is told apart").isEqualTo(StartOverReason.OTHER_ID);
        assertThat(container).doesNotExist();
    }

    @Test
    void claim_epochOne_startsOverEvenForTheIdInTheFile() throws Exception {
        owner("2 1\n");
        claims(2, 1, StartOverReason.NEW_MEMBERSHIP);
    }

    @Test
    void claim_ownerFileTornOrForeign_startsOver() throws Exception {
        for (String bad : new String[] {"", "2", "2 2", "2\n", "02 2\n", "0 2\n", "2 02\n", "2 0\n",
                "-2 2\n", "2 2\n\n", "2  2\n", "two 2\n", "123456789012345678901 2\n"}) {
            Files.createDirectories(container.getParent());
            Files.writeString(container, "x");
            owner(bad);
            assertThat(worker.claim(2, 3)).as("owner file '%s'", bad).isEqualTo(StartOverReason.UNREADABLE_OWNER);
            assertThat(container).doesNotExist();
            assertThat(owner()).isEqualTo("2 3\n");
        }
    }

    @Test
    void claim_eachCase_saysWhyOrNothingWhenKeptOrNothingWasLost() throws Exception {
        owner("2 3\n");
        assertThat(worker.claim(2, 4)).as("the epoch before: kept").isNull();
        assertThat(worker.claim(2, 6)).as("epoch 5 not seen").isEqualTo(StartOverReason.EPOCH_GAP);
        assertThat(worker.claim(3, 7)).as("file names worker 2").isEqualTo(StartOverReason.OTHER_ID);
        owner("3 x\n");
        assertThat(worker.claim(3, 8)).isEqualTo(StartOverReason.UNREADABLE_OWNER);
        Files.createDirectories(container.getParent());
        Files.writeString(container, "stored since");
        assertThat(worker.claim(3, 1)).as("a removed worker's index discarded").isEqualTo(StartOverReason.NEW_MEMBERSHIP);
        LazyDedupWorker fresh = unopened(dir.resolve("new"));
        assertThat(fresh.claim(9, 1)).as("a new worker with nothing on disk lost nothing").isNull();
        assertThat(Files.readString(dir.resolve("new").resolve(IndexOwnerFile.NAME))).isEqualTo("9 1\n");
    }

    @Test
    void claim_newWorkerWhoseIndexHoldsOnlyItsOwnerFile_reportsNothing() throws Exception {
        Path fresh = dir.resolve("owner-only");
        LazyDedupWorker worker = unopened(fresh);
        assertThat(worker.claim(9, 1)).as("first registration, nothing on disk").isNull();
        assertThat(worker.claim(9, 1)).as("registered as new again before it stored any entry: nothing was lost").isNull();
        assertThat(Files.readString(fresh.resolve(IndexOwnerFile.NAME))).isEqualTo("9 1\n");
        Files.writeString(fresh.resolve("00000001.hfc"), "an entry");
        assertThat(worker.claim(9, 1)).as("beside an entry the owner file is an index").isEqualTo(StartOverReason.NEW_MEMBERSHIP);
    }

    @Test
    void claim_emptyDirectoryAtEpochOne_staysInPlace() throws Exception {
        Files.delete(container);
        Files.delete(container.getParent());
        Object key = Files.readAttributes(index, BasicFileAttributes.class).fileKey();
        assertThat(worker.claim(2, 1)).as("started over, but an empty index lost nothing").isNull();
        assertThat(Files.readAttributes(index, BasicFileAttributes.class).fileKey())
                .as("not moved: a mount point there could not be").isEqualTo(key);
        assertThat(owner()).isEqualTo("2 1\n");
    }

    @Test
    void claim_noDirectoryYet_createsItWithTheOwnerFile() throws Exception {
        LazyDedupWorker fresh = unopened(dir.resolve("new"));
        assertThat(fresh.claim(7, 2)).isNull();
        assertThat(Files.readString(dir.resolve("new").resolve(IndexOwnerFile.NAME))).isEqualTo("7 2\n");
    }

    @Test
    void claim_epochGap_registrationsThisIndexDidNotSee_startsOver() throws Exception {
        owner("2 4\n"); // served worker 2 at epoch 4; another node held 2 at epoch 5 (a replacement) and heard the forgets
        claims(2, 6, StartOverReason.EPOCH_GAP);
    }

    @Test
    void claim_epochLowerThanTheFile_aMasterWhoseCatalogWentBack_startsOver() throws Exception {
        owner("2 9\n");
        claims(2, 6, StartOverReason.EPOCH_GAP);
    }

    /**
     * A start-over that stops half-way (a file it cannot delete here; a crash in real life) must not
     * leave the old index in place without its owner file: the next registration would keep it as an
     * upgraded worker's, and answer for the new id from another id's index.
     */
    @Test
    void claim_startOverStoppedHalfWay_theNextRegistrationNeverKeepsTheOldIndex() throws Exception {
        owner("1 4\n"); // this host was worker 1; it takes over worker 2
        assumeTrue(undeletable(container, true), "needs chattr +i (root) or a read-only directory (not root)");
        try {
            try {
                worker.claim(2, 5);
            } catch (RuntimeException e) {
                // the registration fails; the worker registers again
            }
            boolean keptOrRefused;
            try {
                keptOrRefused = worker.claim(2, 6) == null;
            } catch (RuntimeException e) {
                keptOrRefused = false; // refusing to serve is safe
            }
            assertThat(keptOrRefused && Files.exists(container)).as("worker 1's index kept for worker 2").isFalse();
            assertThat(container).as("no block file of worker 1 is in the index directory").doesNotExist();
            assertThat(owner()).isEqualTo("2 6\n");
        } finally {
            try (var all = Files.walk(dir)) {
                for (Path p : all.toList()) {
                    undeletable(p, false);
                }
            }
        }
    }

    /**
     * The owner file cannot be written (a full disk; here a directory that takes no new file): the
     * registration fails rather than serve, and the file still names the epoch before, so the next
     * registration (two epochs on) starts the index over instead of trusting it.
     */
    @Test
    void claim_ownerFileNotWritten_failsTheRegistration_andTheNextOneStartsOver() throws Exception {
        owner("2 5\n");
        assumeTrue(undeletable(index, true), "needs chattr +i (root) or a read-only directory (not root)");
        try {
            assertThatThrownBy(() -> worker.claim(2, 6)).isInstanceOf(StoreException.class).hasMessageContaining(IndexOwnerFile.NAME);
            assertThat(owner()).isEqualTo("2 5\n");
        } finally {
            undeletable(index, false);
        }
        claims(2, 7, StartOverReason.EPOCH_GAP);
    }

    /**
     * Makes {@code file} undeletable (or deletable again), and a directory closed to new files:
     * immutable as root, else the directory (a file's own) read-only.
     */
    private static boolean undeletable(Path file, boolean on) throws Exception {
        if ("root".equals(System.getProperty("user.name"))) {
            Process p = new ProcessBuilder("chattr", on ? "+i" : "-i", file.toString()).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor() == 0;
        }
        return (Files.isDirectory(file) ? file : file.getParent()).toFile().setWritable(!on, false);
    }
}
