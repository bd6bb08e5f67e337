package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobHistory;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.BackupFiles;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.UnknownCatalogBackupException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The health check and the metrics count damaged backups, and a re-check request is queued, without
 * waiting for a backup in progress (which holds the backups' monitor for its whole copy): a probe
 * that hangs for minutes gets a healthy server restarted mid-backup.
 */
class CatalogBackupHealthTest {
    @TempDir
    Path tmp;

    @Test
    void damagedBackupsAndVerify_whileABackupHoldsTheEngine_answerAtOnce() throws Exception {
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(tmp.resolve("backups"));
             Jobs jobs = new Jobs(JobHistory.NONE, Clock.systemUTC())) {
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, "n", 1);
                db.write(b, true);
            }
            backups.create(db, "", 7);
            BackupFiles.rot(tmp.resolve("backups"));
            assertThat(backups.verify(1, true, n -> { }, 1L).sound()).isFalse();
            CatalogBackupJobs cb = new CatalogBackupJobs(backups, new Catalog(db), new Object(), jobs, 7, org.holdfast.server.security.AuditLog.NONE);

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread copying = new Thread(() -> {
                synchronized (backups) { // as create() holds it while the engine copies
                    held.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            copying.start();
            Job queued;
            try {
                assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
                CompletableFuture<Long> probe = CompletableFuture.supplyAsync(cb::damagedBackups);
                assertThat(probe.get(5, TimeUnit.SECONDS)).isEqualTo(1);
                CompletableFuture<Job> request = CompletableFuture.supplyAsync(() -> cb.verify(1, "admin"));
                queued = request.get(5, TimeUnit.SECONDS);
                assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> cb.verify(2, "admin")))
                        .as("an unknown id is still refused at once").isInstanceOf(UnknownCatalogBackupException.class);
            } finally {
                release.countDown();
                copying.join();
            }
            assertThat(jobs.await(queued.id(), Duration.ofSeconds(60)).state()).as("the re-check runs once the copy ends")
                    .isEqualTo(JobState.FAILED);
        }
    }
}
