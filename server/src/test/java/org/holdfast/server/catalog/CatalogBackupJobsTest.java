package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.server.e2e.SmallDisk;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobHistory;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.store.BackupFiles;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Catalog backup jobs on a real catalog and backup directory: each backup is verified as it is
 * written, a damaged one fails its job (audited, remembered for the health check), and a backup disk
 * that fills mid-backup fails the job clearly, leaves the older backups as they were, and the next
 * scheduled backup succeeds once there is space.
 */
class CatalogBackupJobsTest {
    @TempDir
    Path tmp;

    private final List<AuditEvent> audit = new CopyOnWriteArrayList<>();

    /** About {@code n} × 100 incompressible bytes of catalog tables. */
    static void fill(MetadataDb db, long from, long n, long seed) {
        Random rnd = new Random(seed);
        try (MetadataBatch b = new MetadataBatch()) {
            for (long i = from; i < from + n; i++) {
                byte[] v = new byte[100];
                rnd.nextBytes(v);
                db.put(b, MetadataDb.Column.META, ("k/" + i).getBytes(StandardCharsets.UTF_8), v);
            }
            db.write(b, true);
        }
    }

    private Job run(Jobs jobs, Job queued) throws InterruptedException {
        return jobs.await(queued.id(), Duration.ofSeconds(60));
    }

    @Test
    void submit_verifiesTheNewBackup_aDamagedOneFailsItsReCheck_audited_aDamagedNewOnePurgesNothing_theNextOneHeals() throws Exception {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"));
             Jobs jobs = new Jobs(JobHistory.NONE, Clock.systemUTC())) {
            fill(db, 0, 2000, 1);
            CatalogBackupJobs cb = new CatalogBackupJobs(backups, new Catalog(db), new Object(), jobs, 1, audit::add);
            Job first = run(jobs, cb.submit("admin"));
            assertThat(first.state()).as(first.toString()).isEqualTo(JobState.SUCCEEDED);
            @SuppressWarnings("unchecked")
            Map<String, Object> v = (Map<String, Object>) first.result().get("verification");
            assertThat(v).containsEntry("result", "sound").containsEntry("checksums", true);
            assertThat(cb.list().get(0).verified().result()).isEqualTo("sound");
            assertThat(cb.lastFailure()).isNull();
            assertThat(cb.lastSoundMillis()).isPositive();

            String rotten = BackupFiles.rot(tmp.resolve("backups"));
            Job recheck = run(jobs, cb.verify(1, "admin"));
            assertThat(recheck.state()).isEqualTo(JobState.FAILED);
            assertThat(recheck.error()).contains("catalog backup 1").contains("is damaged").contains(rotten)
                    .contains("check it").contains("no older backup");
            assertThat(recheck.progress().bytesDone()).as("read with checksums, with progress").isPositive();
            CatalogBackupJobs.Listed listed = cb.list().get(0);
            assertThat(listed.verified().result()).isEqualTo("damaged");
            assertThat(listed.verified().problems()).singleElement().asString().contains(rotten);
            assertThat(cb.damagedBackups()).isEqualTo(1);
            assertThat(cb.lastFailure().message()).contains("is damaged");
            assertThat(cb.failuresTotal()).isEqualTo(1);
            assertThat(audit).extracting(AuditEvent::action, AuditEvent::target, AuditEvent::result).containsExactly(
                    org.assertj.core.groups.Tuple.tuple(CatalogBackupJobs.AUDIT_VERIFIED, "catalog-backup:1", "ok"),
                    org.assertj.core.groups.Tuple.tuple(CatalogBackupJobs.AUDIT_VERIFIED, "catalog-backup:1", "failed"));

            // the next backup sets the table the re-check found rotten aside, and copies it afresh from the catalog
            fill(db, 2000, 10, 2);
            Job second = run(jobs, cb.submit("schedule"));
            assertThat(second.state()).as(second.toString()).isEqualTo(JobState.SUCCEEDED);
            assertThat(second.result().get("damagedFilesSetAside")).isEqualTo(List.of(rotten));
            assertThat(backups.list()).as("the backup that held it is gone: it could not be restored").extracting(CatalogBackups.Info::id)
                    .containsExactly(2);
            assertThat(cb.lastFailure()).isNull();
            assertThat(cb.damagedBackups()).isZero();
            try (var s = Files.list(tmp.resolve("backups/holdfast-verify/damaged"))) {
                assertThat(s.toList()).as("kept for a look, not deleted").hasSize(1);
            }
            backups.restore(2, tmp.resolve("restored"));
            try (MetadataDb r = MetadataDb.open(tmp.resolve("restored"))) {
                assertThat(r.get(MetadataDb.Column.META, "k/2009".getBytes(StandardCharsets.UTF_8))).hasSize(100);
            }

            // rot that only a new backup's own verification finds (it shares the table): that backup fails, and keep 1 purges nothing for it
            settle(tmp.resolve("catalog"));
            assertThat(run(jobs, cb.submit("schedule")).state()).isEqualTo(JobState.SUCCEEDED); // backup 3: the settled tables
            String again = rotALiveTable(tmp.resolve("catalog"), tmp.resolve("backups"));
            Job fourth = run(jobs, cb.submit("schedule"));
            assertThat(fourth.state()).isEqualTo(JobState.FAILED);
            assertThat(fourth.error()).contains("catalog backup 4").contains("is damaged").contains(again)
                    .contains("No sound older backup was deleted");
            assertThat(backups.list()).as("keep 1, but a damaged backup pushes no older one out").extracting(CatalogBackups.Info::id)
                    .containsExactly(3, 4);
            Job fifth = run(jobs, cb.submit("schedule"));
            assertThat(fifth.state()).as(fifth.toString()).isEqualTo(JobState.SUCCEEDED);
            assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(5);
            try (var s = Files.list(tmp.resolve("backups/holdfast-verify"))) {
                assertThat(s.filter(Files::isRegularFile).map(p -> p.getFileName().toString()))
                        .as("the records of deleted backups are gone").containsExactly("5");
            }
        }
    }

    /** Waits until the catalog's background compactions settled: its table files unchanged for half a second. */
    private static void settle(Path catalog) throws Exception {
        java.util.Set<String> live = liveTables(catalog);
        for (long settled = System.nanoTime(); System.nanoTime() - settled < 500_000_000L; ) {
            Thread.sleep(50);
            java.util.Set<String> now = liveTables(catalog);
            if (!now.equals(live)) {
                live = now;
                settled = System.nanoTime();
            }
        }
    }

    /** Rots a shared table that the live catalog still has, so the next backup holds it too. */
    private static String rotALiveTable(Path catalog, Path backups) throws Exception {
        java.util.Set<String> live = liveTables(catalog);
        try (var s = Files.list(backups.resolve("shared_checksum"))) {
            Path sst = s.filter(p -> live.contains(p.getFileName().toString().split("_")[0])).sorted().findFirst().orElseThrow();
            BackupFiles.flip(sst);
            return backups.relativize(sst).toString();
        }
    }

    /** The numbers of the catalog's live table files ({@code 000012} of {@code 000012.sst}). */
    private static java.util.Set<String> liveTables(Path catalog) throws Exception {
        try (var s = Files.list(catalog)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".sst")).map(n -> n.substring(0, n.length() - 4))
                    .collect(java.util.stream.Collectors.toSet());
        }
    }

    @Test
    void schedule_backupDiskFillsMidBackup_jobNamesDirAndFreeSpace_olderBackupIntact_nextRunSucceeds() throws Exception {
        try (SmallDisk disk = SmallDisk.mount(tmp.resolve("small"), 8L << 20)) {
            Assumptions.assumeTrue(disk.real(), "needs a real small file system that fills up; ran on: " + disk.kind());
            Path dir = disk.dir().resolve("backups");
            try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
                 CatalogBackups backups = CatalogBackups.open(dir);
                 Jobs jobs = new Jobs(JobHistory.NONE, Clock.systemUTC())) {
                fill(db, 0, 10_000, 1); // about 1 MB of tables
                CatalogBackupJobs cb = new CatalogBackupJobs(backups, new Catalog(db), new Object(), jobs, 7, audit::add);
                assertThat(run(jobs, cb.submit("admin")).state()).isEqualTo(JobState.SUCCEEDED);
                Map<String, String> before = BackupFiles.digests(dir);

                fill(db, 10_000, 20_000, 2); // about 2 MB more, and only 512 KiB free
                Path filler = disk.fillLeaving(512 << 10);
                cb.startSchedule(Duration.ofSeconds(2));
                Job failed = awaitEnded(jobs, 1);
                System.out.println("[catalog-backup-full] " + failed.error());
                assertThat(failed.state()).isEqualTo(JobState.FAILED);
                assertThat(failed.error()).contains(dir.toString()).contains("ran out of space").contains("bytes free")
                        .contains("older backups are intact").contains("holdfast.catalog.backup.directory");
                assertThat(cb.lastFailure().message()).contains("ran out of space");
                // the schedule retries every 2 s meanwhile; create() holds this monitor while it copies (and
                // deletes what a failed copy left), so no retry's partial files are in the directory while we look
                synchronized (backups) {
                    assertThat(BackupFiles.digests(dir)).as("the partial backup is gone, backup 1 untouched").isEqualTo(before);
                    assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(1);
                }
                assertThat(backups.verify(1, true, n -> { }, 1L).sound()).isTrue();
                backups.restore(1, tmp.resolve("restored"));
                try (MetadataDb r = MetadataDb.open(tmp.resolve("restored"))) {
                    assertThat(r.get(MetadataDb.Column.META, "k/9999".getBytes(StandardCharsets.UTF_8))).hasSize(100);
                }

                Files.delete(filler);
                Job next = awaitSucceeded(jobs);
                assertThat(next.result().get("backupId")).isEqualTo(2L);
                assertThat(cb.lastFailure()).as("the health check is UP again").isNull();
                cb.close();
            }
        }
    }

    private static Job awaitEnded(Jobs jobs, int failures) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            List<Job> failed = jobs.list(new Jobs.Query(CatalogBackupJobs.KIND, JobState.FAILED, null, 10)).jobs();
            if (failed.size() >= failures) {
                return failed.get(0);
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no scheduled backup failed within 60 s");
    }

    private static Job awaitSucceeded(Jobs jobs) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            List<Job> ok = jobs.list(new Jobs.Query(CatalogBackupJobs.KIND, JobState.SUCCEEDED, null, 10)).jobs();
            if (ok.size() >= 2) {
                return ok.get(0);
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the next scheduled backup did not succeed within 60 s");
    }
}
