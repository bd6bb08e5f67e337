package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.IngestSettings;
import org.holdfast.server.ingest.RecordingAuditLog;
import org.holdfast.server.ingest.TestTokens;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.stats.Statistics;
import org.holdfast.server.stats.StatsReport;
import org.holdfast.server.stats.TransferRates;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.DiskSpace;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reclaim-now on a small store whose only data log is still the active one (logs roll at 256 MiB):
 * the garbage sits in the log being written, and reclaim-now must still give it back. Real RocksDB,
 * real data logs, the real ingest on loopback; fsck is the oracle.
 */
class ReclaimActiveLogTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 256;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private GcStoreFixture fx;
    private IngestServer ingest;
    private RecordingReferenceGuard guard;
    private S3ProxyFixture s3;

    private void open(boolean archived) throws Exception {
        open(archived, org.holdfast.server.store.Compactor.DEFAULT_RECLAIM_THRESHOLD);
    }

    private void open(boolean archived, double reclaimThreshold) throws Exception {
        open(archived, reclaimThreshold, null, 0);
    }

    private void open(boolean archived, double reclaimThreshold, DiskSpace disk, long reserve) throws Exception {
        LogArchive archive = null;
        if (archived) {
            s3 = S3ProxyFixture.start(dir.resolve("s3"));
            archive = new LogArchive(S3ObjectStore.open(s3.settings("r/")), "r");
        }
        fx = GcStoreFixture.open(dir, clock, 256L << 20, Duration.ofHours(2), 4, hook -> hook, CommitParts.DEFAULT_PART_ENTRIES,
                archive, org.holdfast.server.engine.ExactFingerprintIndex::new, org.holdfast.common.id.PbnRange.STANDALONE,
                reclaimThreshold, disk, reserve);
        ingest = new IngestServer(IngestSettings.loopback(), new IngestServices(fx.store, fx.catalog, fx.commit, fx.index,
                guard = new RecordingReferenceGuard(new GcReferenceGuard(fx.gc)), clock, new TestTokens(), new RecordingAuditLog()));
        ingest.start();
    }

    @AfterEach
    void close() throws Exception {
        if (ingest != null) {
            ingest.close();
        }
        if (fx != null) {
            fx.close();
        }
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void reclaimNow_garbageInTheOnlyActiveLog_logBytesShrinkByTheDeadBytesAndEverySnapshotRestores() throws Exception {
        open(false);
        Random r = new Random(21);
        byte[] keep1 = random(r);
        byte[] keep2 = keep1.clone();
        ReclaimNowTest.fill(r, keep2, 0, 32);
        backup("keep", keep1);
        backup("keep", keep2);
        backup("gone", random(r));
        backup("gone", random(r));
        assertThat(dataLogs()).as("one data log, still the active one").hasSize(1);
        long before = logBytes();
        fx.gc.deleteVolume(new VolumeId("gone"), VolumeGate.NONE);
        clock.millis += HOUR;

        GcService.ReclaimReport rep = fx.gc.reclaimNow(JobContext.NONE);

        assertThat(rep.blocksFreed()).isEqualTo(2 * BLOCKS);
        long deadRecords = rep.bytesFreed() + rep.blocksFreed() * FormatVersions.RECORD_HEADER_BYTES;
        assertThat(rep.compaction().logsRewritten()).as("the sealed active log was rewritten").isEqualTo(1);
        assertThat(rep.compaction().bytesReclaimed()).isEqualTo(deadRecords);
        long after = logBytes();
        assertThat(before - after).as("the logs shrink by the dead records, less the fresh log's header")
                .isEqualTo(deadRecords - FormatVersions.DATA_LOG_HEADER_BYTES);
        assertThat(dataLogs()).as("the rewritten log and a fresh active one").hasSize(2);
        assertThat(restore("keep", 1)).isEqualTo(keep1);
        assertThat(restore("keep", 2)).isEqualTo(keep2);
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();

        // the next backup goes to the fresh log; a second reclaim has nothing to seal or rewrite
        byte[] later = random(r);
        backup("later", later);
        GcService.ReclaimReport again = fx.gc.reclaimNow(JobContext.NONE);
        assertThat(again.blocksFreed()).isZero();
        assertThat(again.compaction().logsRewritten()).isZero();
        assertThat(dataLogs()).hasSize(2);
        assertThat(restore("later", 1)).isEqualTo(later);
    }

    /**
     * The admin's disk-full trial in small: a backup stores many new blocks into the active log, which is
     * otherwise live (above the cycle's 0.5), and is abandoned (as after STORAGE_FULL). Reclaim-now gives
     * its blocks back to the file system; a block it shared with a committed snapshot survives.
     */
    @Test
    void reclaimNow_backupAbandonedInAMostlyLiveLog_logBytesShrinkByItsBlocksAndSharedBlocksSurvive() throws Exception {
        open(false);
        Abandoned a = abandonedBackup(new Random(24));
        assertThat(a.liveShare()).as("the log is above the cycle's threshold").isGreaterThan(0.5);

        GcService.ReclaimReport rep = fx.gc.reclaimNow(JobContext.NONE);

        assertThat(rep.blocksFreed()).as("the abandoned session's own blocks").isEqualTo(BLOCKS - SHARED);
        assertThat(rep.bytesFreed()).isGreaterThanOrEqualTo((long) (BLOCKS - SHARED) * BS);
        long deadRecords = rep.bytesFreed() + rep.blocksFreed() * FormatVersions.RECORD_HEADER_BYTES;
        assertThat(rep.compaction().threshold()).isEqualTo(org.holdfast.server.store.Compactor.DEFAULT_RECLAIM_THRESHOLD);
        assertThat(rep.compaction().logsRewritten()).as("the sealed active log was rewritten").isEqualTo(1);
        assertThat(rep.compaction().logsDeferred()).isZero();
        assertThat(rep.compaction().bytesReclaimed()).isEqualTo(deadRecords);
        assertShrunkAndIntact(a, deadRecords);
    }

    /**
     * The admin's trial itself: after the failed backup the disk is full, with less room above the GC floor
     * (a quarter of the reserve) than the log's live part, so the log cannot be rewritten. Reclaim-now still
     * gives the failed backup's blocks back, the tail of the log, by a cut; the snapshots restore, fsck is clean.
     */
    @Test
    void reclaimNow_diskFullAfterTheFailedBackup_cutsItsBlocksOffTheLogWithoutACopy() throws Exception {
        long reserve = 1L << 20;
        long[] free = {1L << 40};
        open(false, org.holdfast.server.store.Compactor.DEFAULT_RECLAIM_THRESHOLD, new DiskSpace() {
            @Override
            public long usableBytes() {
                return free[0];
            }

            @Override
            public String describe() {
                return "a disk the test fills";
            }
        }, reserve);
        Abandoned a = abandonedBackup(new Random(25));
        free[0] = reserve + (64 << 10); // the backup stopped at the reserve: ~0.8 MiB above the floor, the live part is ~1.2 MiB
        fx.store.reserve().invalidate();

        GcService.ReclaimReport rep = fx.gc.reclaimNow(JobContext.NONE);

        assertThat(rep.blocksFreed()).isEqualTo(BLOCKS - SHARED);
        long deadRecords = rep.bytesFreed() + rep.blocksFreed() * FormatVersions.RECORD_HEADER_BYTES;
        GcService.CompactionReport c = rep.compaction();
        assertThat(c.logsRewritten()).as("%s", c).isZero();
        assertThat(c.logsDeferred()).as("%s", c).isEqualTo(1);
        assertThat(c.bytesDeferred()).as("%s", c).isGreaterThan(fx.store.reserve().gcRoom());
        assertThat(c.logsTrimmed()).as("%s", c).isEqualTo(1);
        assertThat(c.bytesReclaimed()).as("the failed backup's records were the log's tail").isEqualTo(deadRecords);
        assertShrunkAndIntact(a, deadRecords);
    }

    /** The logs shrank by the abandoned backup's records (less the fresh log's header); keep restores bit for bit; fsck is clean. */
    private void assertShrunkAndIntact(Abandoned a, long deadRecords) throws IOException {
        assertThat(a.logBytes() - logBytes()).as("the logs shrink by the abandoned blocks, less the fresh log's header")
                .isEqualTo(deadRecords - FormatVersions.DATA_LOG_HEADER_BYTES);
        assertThat(restore("keep", 1)).isEqualTo(a.keep1());
        assertThat(restore("keep", 2)).isEqualTo(a.keep2());
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
    }

    /** Before: at the cycle's threshold (main's reclaim-now) the same log keeps the abandoned blocks' bytes. */
    @Test
    void reclaimNow_atTheCycleThreshold_mostlyLiveLogKeepsTheAbandonedBytes() throws Exception {
        open(false, 0.5);
        Abandoned a = abandonedBackup(new Random(24));

        GcService.ReclaimReport rep = fx.gc.reclaimNow(JobContext.NONE);

        assertThat(rep.blocksFreed()).isEqualTo(BLOCKS - SHARED);
        assertThat(rep.compaction().logsRewritten()).isZero();
        assertThat(rep.compaction().logsExamined()).as("the active log is not sealed").isZero();
        assertThat(logBytes()).isEqualTo(a.logBytes());
        assertThat(dataLogs()).as("the active log stays the only one").hasSize(1);
        // /stats promises only what a GC run gives back: nothing at 0.5; the dead bytes once the threshold is above the live share
        long dead = rep.bytesFreed() + rep.blocksFreed() * FormatVersions.RECORD_HEADER_BYTES;
        assertThat(stats(0.5).reclaimable().nowBytes()).isZero();
        assertThat(stats(0.7).reclaimable().nowBytes()).isEqualTo(dead);
        assertThat(stats(0.7).reclaimable().compactableBytes()).isEqualTo(dead);
        assertThat(restore("keep", 1)).isEqualTo(a.keep1());
    }

    private static final int SHARED = 32;

    /** Two committed snapshots, and an abandoned backup's blocks after them in the log; the log's bytes then. */
    private record Abandoned(byte[] keep1, byte[] keep2, long logBytes, double liveShare) {
    }

    /**
     * Commits {@code keep} twice (the second changes {@link #SHARED} blocks), then a backup of a new volume
     * uploads a full image whose first {@link #SHARED} blocks are keep's (deduplicated to keep's PBNs) and
     * disconnects without committing; returns once the server ended the session.
     */
    private Abandoned abandonedBackup(Random r) throws Exception {
        byte[] keep1 = random(r);
        byte[] keep2 = keep1.clone();
        ReclaimNowTest.fill(r, keep2, SHARED, SHARED);
        backup("keep", keep1);
        backup("keep", keep2);
        long first = fx.store.range().first();
        long liveBlocks = fx.store.nextPbn() - first;
        byte[] image = random(r);
        System.arraycopy(keep1, 0, image, 0, SHARED * BS);
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            a.begin("failed", BS, image.length, 0);
            long before = fx.store.nextPbn();
            int asked = a.sendEntriesAndBlocks(image, BS, 0, BLOCKS, true, null);
            assertThat(asked).as("keep's blocks are matched, not sent").isEqualTo(BLOCKS - SHARED);
            awaitStoredAndProtected(before, before + asked);
            fx.store.sync();
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (fx.gc.guard().openSessions() > 0) {
            assertThat(System.nanoTime()).as("the server abandons the session in 30 s").isLessThan(deadline);
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        clock.millis += HOUR;
        assertThat(dataLogs()).as("one data log, still the active one").hasSize(1);
        return new Abandoned(keep1, keep2, logBytes(), (double) liveBlocks / (fx.store.nextPbn() - first));
    }

    private StatsReport stats(double threshold) {
        return new Statistics(fx.catalog, dir, dir.resolve("data"), new StoreSurvey(fx.store, fx.gc.pipeline()),
                new TransferRates(clock::millis), clock, Duration.ZERO, threshold).report();
    }

    /**
     * A backup writes into the active log before, during and after reclaim-now seals it: its first
     * half lies in the sealed log (protected by the in-flight watch, copied by the compaction), the
     * rest is sent while reclaim-now runs and goes to whichever log is active. It commits and restores.
     */
    @Test
    void reclaimNow_backupWritingIntoTheActiveLogMeanwhile_commitsAndRestores() throws Exception {
        open(false);
        backupDuringReclaim();
    }

    /** The same with backend s3: the sealed active log is uploaded before the compaction rewrites it. */
    @Test
    void reclaimNow_archived_sealedActiveLogIsUploadedThenRewritten() throws Exception {
        open(true);
        backupDuringReclaim();
        fx.store.archive().awaitUploads(60_000);
        assertThat(fx.store.archive().isUploaded(1)).as("the sealed active log (as rewritten) is in the object store").isTrue();
    }

    private void backupDuringReclaim() throws Exception {
        Random r = new Random(23);
        byte[] keep = random(r);
        backup("keep", keep);
        for (int i = 0; i < 3; i++) {
            backup("gone", random(r));
        }
        fx.gc.deleteVolume(new VolumeId("gone"), VolumeGate.NONE);
        // live at most keep + busy (512 of 1280 blocks, 0.4) however much of busy arrives before the seal
        byte[] image = random(r);
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            a.begin("busy", BS, image.length, 0);
            long before = fx.store.nextPbn();
            int asked = a.sendEntriesAndBlocks(image, BS, 0, BLOCKS / 2, true, null);
            awaitStoredAndProtected(before, before + asked);

            CompletableFuture<GcService.ReclaimReport> reclaim = CompletableFuture.supplyAsync(() -> fx.gc.reclaimNow(JobContext.NONE));
            int step = 8;
            for (int from = BLOCKS / 2; from < BLOCKS; from += step) {
                a.sendEntriesAndBlocks(image, BS, from, from + step, true, null);
            }
            GcService.ReclaimReport rep = reclaim.get();
            assertThat(rep.blocksFreed()).as("gone's blocks").isEqualTo(3 * BLOCKS);
            assertThat(rep.compaction().logsRewritten()).as("the sealed active log was rewritten").isEqualTo(1);
            a.send(new Commit(image.length));
            assertThat(a.expect(Committed.class).sequence()).isEqualTo(1);
        }
        assertThat(restore("busy", 1)).as("the backup written across the seal").isEqualTo(image);
        assertThat(restore("keep", 1)).isEqualTo(keep);
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
    }

    // ------------------------------------------------------------------ helpers

    private List<Path> dataLogs() throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve("data"))) {
            return s.filter(p -> DataLog.parseId(p.getFileName().toString()) >= 0).toList();
        }
    }

    private long logBytes() throws IOException {
        long n = 0;
        for (Path p : dataLogs()) {
            n += Files.size(p);
        }
        return n;
    }

    private static byte[] random(Random r) {
        return ReclaimNowTest.random(r);
    }

    private void backup(String volume, byte[] image) {
        ReclaimNowTest.backup(ingest, volume, image);
    }

    private byte[] restore(String volume, long seq) {
        return ReclaimNowTest.restore(ingest, volume, seq);
    }

    /**
     * Waits until the ingest stored the uploaded blocks, PBNs [{@code from}, {@code to}) (BLOCKS frames get no
     * answer), and protected them: it protects a frame's blocks once all are stored, a moment a loaded machine can stretch.
     */
    private void awaitStoredAndProtected(long from, long to) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (fx.store.nextPbn() < to || !guard.protectedAll(from, to)) {
            assertThat(System.nanoTime()).as("blocks stored and protected in 30 s").isLessThan(deadline);
            java.util.concurrent.locks.LockSupport.parkNanos(100_000); // not a spin: leaves the cores to the ingest
        }
    }
}
