package org.holdfast.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A killed run's temporary files go at the next run; a live run's, and anything merely alike, never do. */
class LeftoverTempFilesTest {
    static final String PREFIX = "vm1.state.";
    static final String SUFFIX = ".tmp";

    @TempDir
    Path dir;
    final List<String> notices = new ArrayList<>();

    List<LeftoverTempFiles.Removed> sweep() {
        return LeftoverTempFiles.remove(dir, PREFIX, SUFFIX, "a backup of volume vm1", notices::add);
    }

    static Path file(Path p, int bytes) throws Exception {
        Files.write(p, new byte[bytes]);
        return p;
    }

    @Test
    void remove_unlockedLeftoverOfAKilledRun_removedWithOneLineNamingItsSize() throws Exception {
        Path left = file(dir.resolve(PREFIX + "18446744073709551615" + SUFFIX), 48 * 1024);

        assertThat(sweep()).containsExactly(new LeftoverTempFiles.Removed(left, 48 * 1024));

        assertThat(left).doesNotExist();
        assertThat(notices).singleElement().asString().contains(left.toString()).contains("48.0 KiB")
                .contains("a backup of volume vm1");
    }

    @Test
    void remove_fileOfALiveRunInAnotherThreadOfThisJvm_stays() throws Exception {
        // the daemon runs several backups in one JVM: a POSIX lock does not keep a thread of the same process out
        TempFileGuard guard = TempFileGuard.create(dir, PREFIX, SUFFIX);
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Thread run = new Thread(() -> {
            try (FileChannel ch = FileChannel.open(guard.path(), StandardOpenOption.WRITE)) {
                guard.lock(ch);
                ch.write(ByteBuffer.allocate(4096), 0);
                written.countDown();
                done.await();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        run.start();
        written.await();
        try {
            assertThat(sweep()).isEmpty();
            assertThat(guard.path()).exists().hasSize(4096);
            assertThat(notices).isEmpty();
        } finally {
            done.countDown();
            run.join();
            Files.deleteIfExists(guard.path());
            guard.release();
        }
    }

    @Test
    void remove_ownLiveFileSeenThroughALinkedDirectory_stays() throws Exception {
        // another spelling of the same directory (--target through a symlink) must not make this JVM open its own live file
        Path real = Files.createDirectory(dir.resolve("real"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), real);
        TempFileGuard guard = TempFileGuard.create(real, PREFIX, SUFFIX);
        try (FileChannel ch = FileChannel.open(guard.path(), StandardOpenOption.WRITE)) {
            guard.lock(ch);
            ch.write(ByteBuffer.allocate(100), 0);

            assertThat(LeftoverTempFiles.remove(link, PREFIX, SUFFIX, "x", notices::add)).isEmpty();
            assertThat(guard.path()).exists();
        } finally {
            Files.deleteIfExists(guard.path());
            guard.release();
        }
        // released (its run is over) and written again, unlocked: now a leftover, through the link as well
        Files.write(guard.path(), new byte[100]);
        assertThat(LeftoverTempFiles.remove(link, PREFIX, SUFFIX, "x", notices::add)).hasSize(1);
        assertThat(guard.path()).doesNotExist();
    }

    @Test
    void remove_fileLockedByALiveRunInAnotherProcess_staysUntilThatRunIsKilled() throws Exception {
        LiveTempFileHolder.Held live = LiveTempFileHolder.start(dir, PREFIX, SUFFIX, 8192);
        try {
            assertThat(TempFileGuard.isLive(dir.toRealPath(), live.file().getFileName().toString()))
                    .as("only its lock protects it here").isFalse();

            assertThat(sweep()).isEmpty();
            assertThat(live.file()).exists().hasSize(8192);
        } finally {
            live.kill(); // SIGKILL: no hook runs, as with kill -9 or the OOM killer
        }
        assertThat(live.file()).exists();

        assertThat(sweep()).extracting(LeftoverTempFiles.Removed::file).containsExactly(live.file());
        assertThat(live.file()).doesNotExist();
        assertThat(notices).singleElement().asString().contains("8.0 KiB");
    }

    @Test
    void remove_namesThatOnlyResembleThePattern_neverRemoved() throws Exception {
        Path other = Files.createDirectory(dir.resolve("elsewhere"));
        Path target = file(other.resolve("precious"), 100);
        List<Path> alike = new ArrayList<>();
        for (String name : List.of("vm10.state.5.tmp", "xvm1.state.5.tmp", "vm1.state.5.tmp.bak", "vm1.state.5.tmpx",
                "vm1.state.5", "vm1.state", "vm1.state.tmp", "vm1.state..tmp", "vm1.state.abc.tmp", "vm1.state.-5.tmp",
                "vm1.state.05.tmp", "vm1.state.5x.tmp", "vm1.state.18446744073709551616.tmp", "vm1.state.1.state.2.tmp",
                ".vm1.state.5.tmp", "vm1.state.5.holdfast-restore")) {
            alike.add(file(dir.resolve(name), 10));
        }
        alike.add(Files.createSymbolicLink(dir.resolve(PREFIX + "7" + SUFFIX), target));
        alike.add(Files.createDirectory(dir.resolve(PREFIX + "8" + SUFFIX)));
        for (Path p : alike) {
            Files.setLastModifiedTime(p, FileTime.from(Instant.now().minusSeconds(3600)));
        }

        assertThat(sweep()).isEmpty();

        assertThat(alike).allSatisfy(p -> assertThat(Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue());
        assertThat(target).hasSize(100);
        assertThat(notices).isEmpty();
    }

    @Test
    void remove_emptyFileOfARunThatMayBeAboutToLockIt_staysUntilItIsOld() throws Exception {
        Path empty = file(dir.resolve(PREFIX + "42" + SUFFIX), 0);

        assertThat(sweep()).isEmpty();
        assertThat(empty).exists();

        Files.setLastModifiedTime(empty, FileTime.from(Instant.now().minus(LeftoverTempFiles.EMPTY_GRACE).minusSeconds(5)));
        assertThat(sweep()).extracting(LeftoverTempFiles.Removed::bytes).containsExactly(0L);
        assertThat(empty).doesNotExist();
    }

    @Test
    void remove_missingDirectory_nothingAndNoError() {
        assertThat(LeftoverTempFiles.remove(dir.resolve("none"), PREFIX, SUFFIX, "x", notices::add)).isEmpty();
    }
}
