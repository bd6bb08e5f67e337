package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobResults;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobStoreTest {
    private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");
    private static final Clock CLOCK = Clock.fixed(T0.plusSeconds(3600), ZoneOffset.UTC);

    @TempDir
    Path dir;

    private static Job job(long id, JobState state, Map<String, Object> result) {
        return new Job(id, "gc-cycle", state, "user:olga", T0, state == JobState.QUEUED ? null : T0.plusSeconds(1),
                state.finished() ? T0.plusSeconds(5) : null, new Job.Progress(3, 5, 300, -1, 0.75, 75.0, null), false, result,
                state == JobState.FAILED ? "it broke" : null, List.of("first line", "second line: ünïcode"));
    }

    @Test
    void save_reopen_jobSurvivesWithEveryField() {
        record Sweep(long freed, double seconds) {
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("snapshotsDeleted", 2L);
        result.put("sweep", new Sweep(7, 0.5));
        result.put("samples", List.of(1L, 2L, 3L));
        result.put("clean", true);
        result.put("nothing", null);
        Job saved = job(42, JobState.SUCCEEDED, JobResults.of(result));
        try (MetadataDb db = MetadataDb.open(dir)) {
            new JobStore(db, 10, CLOCK).save(saved);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            List<Job> back = new JobStore(db, 10, CLOCK).newest(10);
            assertThat(back).hasSize(1);
            Job j = back.get(0);
            assertThat(j).usingRecursiveComparison().isEqualTo(saved);
            assertThat(((Map<?, ?>) j.result().get("sweep")).get("freed")).isEqualTo(7L);
        }
    }

    @Test
    void endCutOffByRestore_runningCatalogBackupQueuedGc_endedNamingTheRestoreNoRestartRepair() {
        Instant at = T0.plusSeconds(600);
        Job gc = job(7, JobState.QUEUED, null);
        Job running = job(8, JobState.RUNNING, null);
        Job backup = new Job(8, CatalogBackupJobs.KIND, running.state(), running.submittedBy(), running.submittedAt(),
                running.startedAt(), null, running.progress(), false, null, null, running.log());
        Job done = job(9, JobState.SUCCEEDED, JobResults.of(Map.of("clean", true)));
        try (MetadataDb db = MetadataDb.open(dir)) {
            JobStore store = new JobStore(db, 10, CLOCK);
            store.save(gc);
            store.save(backup);
            store.save(done);
            assertThat(JobStore.endCutOffByRestore(db, at)).isEqualTo(2);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            Map<Long, Job> back = new LinkedHashMap<>();
            new JobStore(db, 10, CLOCK).newest(10).forEach(j -> back.put(j.id(), j));
            assertThat(back.get(8L).state()).isEqualTo(JobState.FAILED);
            assertThat(back.get(8L).endedAt()).isEqualTo(at);
            assertThat(back.get(8L).error()).contains("writing the catalog backup that catalog-restore restored")
                    .doesNotContain(JobStore.INTERRUPTED);
            assertThat(back.get(7L).state()).isEqualTo(JobState.FAILED);
            assertThat(back.get(7L).error()).contains("was queued").contains("catalog-restore restored that backup");
            assertThat(back.get(9L)).usingRecursiveComparison().isEqualTo(done);
        }
    }

    @Test
    void save_sameIdTwice_replacesAndCountsOnce() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            JobStore store = new JobStore(db, 10, CLOCK);
            store.save(job(1, JobState.QUEUED, null));
            store.save(job(1, JobState.RUNNING, null));
            store.save(job(1, JobState.SUCCEEDED, Map.of("a", 1L)));
            assertThat(store.size()).isEqualTo(1);
            assertThat(store.newest(5).get(0).state()).isEqualTo(JobState.SUCCEEDED);
        }
    }

    @Test
    void save_beyondCapacity_keepsTheNewest() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            JobStore store = new JobStore(db, 5, CLOCK);
            for (long id = 1; id <= 12; id++) {
                store.save(job(id, JobState.SUCCEEDED, null));
            }
            assertThat(store.size()).isEqualTo(5);
            assertThat(store.newest(100)).extracting(Job::id).containsExactly(12L, 11L, 10L, 9L, 8L);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            JobStore smaller = new JobStore(db, 3, CLOCK); // a smaller bound prunes at open
            assertThat(smaller.newest(100)).extracting(Job::id).containsExactly(12L, 11L, 10L);
        }
    }

    @Test
    void open_jobsQueuedOrRunningAtDeath_recordedAsFailedInterrupted() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            JobStore store = new JobStore(db, 10, CLOCK);
            store.save(job(1, JobState.SUCCEEDED, Map.of()));
            store.save(job(2, JobState.RUNNING, null));
            store.save(job(3, JobState.QUEUED, null));
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            List<Job> back = new JobStore(db, 10, CLOCK).newest(10);
            assertThat(back).extracting(Job::state).containsExactly(JobState.FAILED, JobState.FAILED, JobState.SUCCEEDED);
            Job running = back.get(1);
            assertThat(running.error()).isEqualTo(JobStore.INTERRUPTED);
            assertThat(running.endedAt()).isEqualTo(CLOCK.instant());
            assertThat(running.progress().itemsDone()).as("the last known progress stays").isEqualTo(3);
            assertThat(back.get(2).error()).isNull();
        }
    }

    @Test
    void decode_damagedValues_areCorruptDataNotCrashes() {
        byte[] good = JobStore.encode(job(1, JobState.SUCCEEDED, Map.of("a", List.of(1L))));
        byte[] badVersion = good.clone();
        badVersion[0] = 9;
        assertThatThrownBy(() -> JobStore.decode(1, badVersion, "p")).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("version 9");
        for (int cut = 0; cut < good.length; cut++) {
            byte[] truncated = java.util.Arrays.copyOf(good, cut);
            assertThatThrownBy(() -> JobStore.decode(1, truncated, "p")).as("cut at " + cut)
                    .isInstanceOf(CorruptDataException.class);
        }
        byte[] longer = java.util.Arrays.copyOf(good, good.length + 1);
        assertThatThrownBy(() -> JobStore.decode(1, longer, "p")).isInstanceOf(CorruptDataException.class);
        // a huge count in a short value must not allocate
        byte[] hugeLog = good.clone();
        int logCountAt = 1 + 1 + 1 + 3 * 8 + 4 * 8 + 2 * 8 + (4 + "gc-cycle".length()) + (4 + "user:olga".length()) + 4;
        java.nio.ByteBuffer.wrap(hugeLog).putInt(logCountAt, Integer.MAX_VALUE);
        assertThatThrownBy(() -> JobStore.decode(1, hugeLog, "p")).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("count");
    }

    @Test
    void open_damagedRecord_skippedWithTheOthersKept() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            JobStore store = new JobStore(db, 10, CLOCK);
            store.save(job(1, JobState.SUCCEEDED, null));
            store.save(job(3, JobState.FAILED, null));
            db.put(db.handle(MetadataDb.Column.JOBS), JobStore.key(2), new byte[] {1, 9, 9});
            db.put(db.handle(MetadataDb.Column.JOBS), new byte[] {7}, new byte[] {1});
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            JobStore store = new JobStore(db, 10, CLOCK);
            assertThat(store.newest(10)).extracting(Job::id).containsExactly(3L, 1L);
        }
    }
}
