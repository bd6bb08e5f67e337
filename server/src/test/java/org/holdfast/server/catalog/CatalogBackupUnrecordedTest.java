package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobHistory;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.BackupFiles;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged backup whose verification the backup disk refused to record, found again after a restart:
 * the next backup job checks the newest backup first when it has no record, so its damaged shared
 * table is set aside and copied afresh instead of being shared by the new backup.
 */
class CatalogBackupUnrecordedTest {
    @TempDir
    Path tmp;

    private static List<String> sharedFiles(Path dir, int id) throws Exception {
        return Files.readAllLines(dir.resolve("meta/" + id)).stream().map(l -> l.split(" ")[0]).filter(n -> n.startsWith("shared")).toList();
    }

    @Test
    void submit_newestBackupDamagedAndUnrecordedBeforeARestart_isCheckedFirst_itsTableSetAside_theNewBackupSound() throws Exception {
        Path dir = tmp.resolve("backups");
        String own;
        try (MetadataDb db = MetadataDb.open(tmp.resolve("catalog"))) {
            try (CatalogBackups backups = CatalogBackups.open(dir)) {
                CatalogBackupJobsTest.fill(db, 0, 2000, 1);
                backups.create(db, "", 7);
                assertThat(backups.verify(1, true, n -> { }, 1L).sound()).isTrue();
                CatalogBackupJobsTest.fill(db, 2000, 100, 2);
                backups.create(db, "", 7);
                List<String> older = sharedFiles(dir, 1);
                own = sharedFiles(dir, 2).stream().filter(n -> !older.contains(n)).findFirst().orElseThrow();
                BackupFiles.flip(dir.resolve(own));
                // a full backup disk refuses the record (here its temporary name is taken by a directory), then the server stops
                Files.createDirectories(dir.resolve("holdfast-verify/2.tmp"));
                assertThat(backups.verify(2, true, n -> { }, 2L).sound()).isFalse();
                assertThat(dir.resolve("holdfast-verify/2")).doesNotExist();
            }
            try (CatalogBackups backups = CatalogBackups.open(dir);
                 Jobs jobs = new Jobs(JobHistory.NONE, Clock.systemUTC())) {
                assertThat(backups.verifications()).as("after the restart nothing says backup 2 is damaged").doesNotContainKey(2);
                CatalogBackupJobsTest.fill(db, 2100, 100, 3);
                CatalogBackupJobs cb = new CatalogBackupJobs(backups, new Catalog(db), new Object(), jobs, 7, e -> { });
                Job job = jobs.await(cb.submit("schedule").id(), Duration.ofSeconds(60));
                assertThat(job.state()).as(job.toString()).isEqualTo(JobState.SUCCEEDED);
                assertThat(job.log()).anyMatch(l -> l.contains("backup 2 had no verification record; checked first: damaged"));
                assertThat(job.result().get("damagedFilesSetAside")).isEqualTo(List.of(own));
                assertThat(backups.list()).extracting(CatalogBackups.Info::id).containsExactly(1, 3);
                String table = own.substring(own.indexOf('/') + 1);
                try (var aside = Files.list(dir.resolve("holdfast-verify/damaged"))) {
                    assertThat(aside.map(p -> p.getFileName().toString())).singleElement().asString().startsWith(table + ".");
                }
                assertThat(backups.verify(3, true, n -> { }, 3L).sound()).isTrue();
            }
        }
    }
}
