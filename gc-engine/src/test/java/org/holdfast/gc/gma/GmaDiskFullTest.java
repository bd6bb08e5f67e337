package org.holdfast.gc.gma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.gc.gma.GmaSlots.addRc;
import static org.holdfast.gc.gma.GmaSlots.rc;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.holdfast.gc.GcStoreException;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GMA on a small tmpfs that fills up (a real ENOSPC; skipped where mounting is not allowed):
 * a journal append or a write in place that fails loses nothing, and once space is back the same
 * object, or the next open, finishes the job.
 */
class GmaDiskFullTest {
    private static final long C = GmaFormat.PBNS_PER_CHUNK;

    @TempDir
    Path tmp;
    private Path dir;
    private boolean mounted;

    private void mount(long size) throws Exception {
        dir = tmp.resolve("disk");
        Files.createDirectories(dir);
        mounted = run(List.of("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString())) == 0;
        Assumptions.assumeTrue(mounted, "needs a real small file system (mount -t tmpfs) for a real ENOSPC");
    }

    @AfterEach
    void unmount() throws Exception {
        if (mounted) {
            run(List.of("umount", "-l", dir.toString())); // lazy: a channel a failed assertion left open must not keep it mounted
        }
    }

    private static int run(List<String> cmd) throws Exception {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(20, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        }
    }

    private Path fillLeaving(long leave) throws IOException {
        Path f = dir.resolve("filler");
        long n = Files.getFileStore(dir).getUsableSpace() - leave;
        byte[] b = new byte[4096];
        try (OutputStream out = Files.newOutputStream(f)) {
            for (long w = 0; w < n; w += b.length) {
                out.write(b);
            }
        } catch (IOException full) {
            // the pipeline's own threads wrote meanwhile and the file system filled first: give back below
        }
        long missing = leave - Files.getFileStore(dir).getUsableSpace();
        if (missing > 0) {
            try (FileChannel c = FileChannel.open(f, StandardOpenOption.WRITE)) {
                c.truncate(Math.max(0, c.size() - (missing + 4095) / 4096 * 4096));
            }
        }
        return f;
    }

    @Test
    void journalAppendHitsEnospc_writeFails_spaceBack_sameObjectWritesAgain_nothingLost() throws Exception {
        mount(2L << 20);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            addRc(gma, 1, 3, 1);
            gma.sync();
            Path filler = fillLeaving(64 << 10);
            assertThatThrownBy(() -> addRc(gma, 2, 3, 1)).isInstanceOf(GcStoreException.class)
                    .hasMessageContaining("No space left");
            gma.sync(); // nothing durable was appended: the torn tail stays unused
            assertThat(rc(gma, 3)).as("the cached chunk keeps the update").isEqualTo(2);
            Files.delete(filler);
            addRc(gma, 3, 3, 1); // the next write of the chunk carries both
            gma.sync();
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThat(rc(gma, 3)).isEqualTo(3);
            assertThat(gma.verify()).isEqualTo(1);
        }
    }

    @Test
    void writeInPlaceHitsEnospc_syncFails_readsComeFromTheJournal_reopenWithSpaceMends() throws Exception {
        mount(2L << 20);
        Path filler;
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            addRc(gma, 1, 3, 1);
            gma.sync();
            filler = fillLeaving(300 << 10); // room for two journal records, not for the new chunk in place too
            addRc(gma, 2, 4 * C + 3, 7);
            addRc(gma, 3, 5 * C - 1, 1); // its last slot: the part of the chunk that does not fit
            assertThatThrownBy(gma::sync).isInstanceOf(GcStoreException.class).hasMessageContaining("No space left");
            gma.evictAll();
            assertThat(rc(gma, 4 * C + 3)).as("the newest copy is in the journal").isEqualTo(7);
            assertThat(Files.size(dir.resolve(GmaFormat.JOURNAL_FILE))).isPositive();
        } // crash: the journal holds the only copy
        assertThatThrownBy(() -> GcMetadataArray.open(dir, 4)).isInstanceOf(GcStoreException.class)
                .hasMessageContaining("No space left");
        Files.delete(filler);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThat(gma.verify()).isEqualTo(5);
            assertThat(rc(gma, 4 * C + 3)).isEqualTo(7);
            assertThat(rc(gma, 5 * C - 1)).isEqualTo(1);
            assertThat(rc(gma, 3)).isEqualTo(1);
        }
        assertThat(Files.size(dir.resolve(GmaFormat.JOURNAL_FILE))).isZero();
    }

    @Test
    void committerStalledByEnospcInTheJournal_anotherPassCommitsItsQueues_stallCleared() throws Exception {
        mount(4L << 20);
        try (BoscPipeline p = BoscPipeline.open(dir, BoscSettings.defaults().withCommitters(1))) {
            p.appendSingle(UpdateKinds.RC_ADD, 3, 1);
            p.commitAll();
            Path filler = fillLeaving(64 << 10); // room for log records, not for a 128 KiB journal record
            p.appendSingle(UpdateKinds.RC_ADD, 3, 1);
            p.awaitDurable();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (p.stalled() == null && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(p.stalled()).as("the committer cannot append to the journal").isNotNull()
                    .hasMessageContaining("No space left");
            Thread.sleep(2500); // its back-off grows to the longest pause
            Files.delete(filler);
            p.commitAll(); // a pass of another thread (as a sweep's) commits the committer's queue
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (p.stalled() != null && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(p.stalled()).as("the GMA writes again: nothing stalls GC (health UP)").isNull();
            assertThat(rc(p.gma(), 3)).isEqualTo(2);
        }
    }

    @Test
    void replayOfManyChunksAfterACrash_needsRoomForAFewJournalRecordsOnly() throws Exception {
        int chunks = 160;
        mount(40L << 20);
        BoscPipeline p = BoscPipeline.open(dir, BoscSettings.defaults().withCommitters(1).withAdvanceCheckpoint(false));
        for (int c = 0; c < chunks; c++) {
            p.appendSingle(UpdateKinds.RC_ADD, c * C + 3, 1);
        }
        p.commitAll(); // every chunk in place: a replay rewrites them, it needs no new space for them
        Path filler = fillLeaving(64 << 10); // the log takes the next updates, the committer cannot write them
        for (int c = 0; c < chunks; c++) {
            p.appendSingle(UpdateKinds.RC_ADD, c * C + 3, 1);
        }
        p.awaitDurable();
        p.abandon(); // crash: the updates are in the log only
        Files.delete(filler);
        filler = fillLeaving(12L << 20); // 12 MiB free: less than a journal of every replayed chunk (20 MiB)
        try (BoscPipeline q = BoscPipeline.open(dir, BoscSettings.defaults().withCommitters(1))) {
            assertThat(q.replayedRecords()).isEqualTo(2L * chunks);
            assertThat(rc(q.gma(), (chunks - 1) * C + 3)).isEqualTo(2);
        }
        assertThat(Files.exists(filler)).isTrue();
    }
}
