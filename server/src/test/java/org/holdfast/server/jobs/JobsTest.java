package org.holdfast.server.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class JobsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private final List<Jobs> opened = new ArrayList<>();

    private Jobs jobs(JobHistory history) {
        Jobs j = new Jobs(history, clock);
        opened.add(j);
        return j;
    }

    @AfterEach
    void close() {
        opened.forEach(j -> j.close(Duration.ofSeconds(5)));
    }

    /** A history in memory, newest first on read, as the store answers. */
    static final class MemoryHistory implements JobHistory {
        final Map<Long, Job> saved = new ConcurrentHashMap<>();

        @Override
        public void save(Job job) {
            saved.put(job.id(), job);
        }

        @Override
        public List<Job> newest(int limit) {
            return saved.values().stream().sorted((a, b) -> Long.compare(b.id(), a.id())).limit(limit).toList();
        }
    }

    private static void await(CountDownLatch l) {
        try {
            assertThat(l.await(20, TimeUnit.SECONDS)).as("latch").isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void submit_workSucceeds_endsSucceededWithResultProgressAndTimes() throws Exception {
        MemoryHistory history = new MemoryHistory();
        Jobs jobs = jobs(history);
        record Report(long blocks, String note) {
        }
        Job queued = jobs.submit("demo", "a", "user:olga", job -> {
            job.total(4, 400);
            for (int i = 0; i < 4; i++) {
                job.advance(1, 100);
            }
            job.log("all done");
            return JobResults.of(new Report(4, "fine"));
        });
        assertThat(queued.state()).isIn(JobState.QUEUED, JobState.RUNNING, JobState.SUCCEEDED);
        Job done = jobs.await(queued.id(), WAIT);
        assertThat(done.state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(done.submittedBy()).isEqualTo("user:olga");
        assertThat(done.result()).containsEntry("blocks", 4L).containsEntry("note", "fine");
        assertThat(done.progress().itemsDone()).isEqualTo(4);
        assertThat(done.progress().bytesTotal()).isEqualTo(400);
        assertThat(done.progress().etaSeconds()).isNull();
        assertThat(done.startedAt()).isNotNull();
        assertThat(done.endedAt()).isNotNull();
        assertThat(done.log()).hasSize(1);
        assertThat(done.log().get(0)).endsWith("all done");
        assertThat(history.saved.get(queued.id()).state()).as("the end is saved").isEqualTo(JobState.SUCCEEDED);
    }

    @Test
    void progress_halfDoneAfterTenSeconds_rateAndEtaFollowFromIt() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        CountDownLatch halfway = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Job queued = jobs.submit("demo", "a", "t", job -> {
            job.total(10, 1000);
            clock.advance(10_000);
            job.advance(5, 400);
            halfway.countDown();
            await(finish);
            return Map.of();
        });
        await(halfway);
        Job running = jobs.get(queued.id());
        assertThat(running.state()).isEqualTo(JobState.RUNNING);
        assertThat(running.progress().itemsPerSecond()).isEqualTo(0.5);
        assertThat(running.progress().bytesPerSecond()).isEqualTo(40.0);
        // bytes decide the ETA when known: 600 bytes left at 40 bytes/s
        assertThat(running.progress().etaSeconds()).isEqualTo(15L);
        finish.countDown();
        assertThat(jobs.await(queued.id(), WAIT).state()).isEqualTo(JobState.SUCCEEDED);
    }

    @Test
    void progress_nothingDoneYet_noEta() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Job q = jobs.submit("demo", "a", "t", job -> {
            job.total(10, -1);
            started.countDown();
            await(finish);
            return Map.of();
        });
        await(started);
        Job j = jobs.get(q.id());
        assertThat(j.progress().etaSeconds()).isNull();
        assertThat(j.progress().itemsPerSecond()).isZero();
        assertThat(j.progress().bytesTotal()).isEqualTo(-1);
        finish.countDown();
        jobs.await(q.id(), WAIT);
    }

    @Test
    void cancel_runningJob_stopsAtNextCheckpointAndKeepsWorkDone() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        CountDownLatch tenDone = new CountDownLatch(1);
        AtomicInteger committed = new AtomicInteger();
        Job q = jobs.submit("demo", "a", "t", job -> {
            job.total(100, -1);
            for (int i = 0; i < 100; i++) {
                job.checkpoint();
                committed.incrementAndGet(); // a unit of work that is complete once done
                job.advance(1, 0);
                if (i == 9) {
                    tenDone.countDown();
                    while (!job.cancelRequested()) {
                        Thread.sleep(1);
                    }
                }
            }
            return Map.of();
        });
        await(tenDone);
        Job asked = jobs.cancel(q.id(), "user:olga");
        assertThat(asked.cancelRequested()).isTrue();
        Job ended = jobs.await(q.id(), WAIT);
        assertThat(ended.state()).isEqualTo(JobState.CANCELLED);
        assertThat(ended.progress().itemsDone()).isEqualTo(10);
        assertThat(committed.get()).as("stopped at the checkpoint after the tenth item").isEqualTo(10);
        assertThat(ended.error()).contains("safe point");
        assertThat(String.join("\n", ended.log())).contains("cancelled by user:olga");
    }

    @Test
    void cancel_queuedJob_isDroppedAndNeverRuns() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean secondRan = new AtomicBoolean();
        Job first = jobs.submit("gc-cycle", "gc", "t", job -> {
            started.countDown();
            await(release);
            return Map.of();
        });
        Job second = jobs.submit("fsck", "gc", "t", job -> {
            secondRan.set(true);
            return Map.of();
        });
        await(started);
        assertThat(jobs.get(second.id()).state()).isEqualTo(JobState.QUEUED);
        Job cancelled = jobs.cancel(second.id(), "t");
        assertThat(cancelled.state()).isEqualTo(JobState.CANCELLED);
        release.countDown();
        assertThat(jobs.await(first.id(), WAIT).state()).isEqualTo(JobState.SUCCEEDED);
        Job third = jobs.submit("fsck", "gc", "t", job -> Map.of()); // runs after the dropped one's turn
        assertThat(jobs.await(third.id(), WAIT).state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(secondRan).as("a cancelled queued job never runs").isFalse();
        assertThat(jobs.get(second.id()).startedAt()).isNull();
    }

    @Test
    void submit_sameLane_runsOneAtATimeInOrder_otherLaneRunsBeside() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        AtomicInteger inGc = new AtomicInteger();
        AtomicInteger maxInGc = new AtomicInteger();
        List<Long> order = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch release = new CountDownLatch(1);
        List<Job> gcJobs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int n = i;
            gcJobs.add(jobs.submit("gc-cycle", "gc", "t", job -> {
                maxInGc.accumulateAndGet(inGc.incrementAndGet(), Math::max);
                order.add((long) n);
                if (n == 0) {
                    await(release);
                } else {
                    Thread.sleep(5);
                }
                inGc.decrementAndGet();
                return Map.of();
            }));
        }
        Job other = jobs.submit("verify", "verify", "t", job -> Map.of());
        assertThat(jobs.await(other.id(), WAIT).state()).as("another lane is not held up by the GC lane")
                .isEqualTo(JobState.SUCCEEDED);
        assertThat(jobs.get(gcJobs.get(3).id()).state()).isEqualTo(JobState.QUEUED);
        release.countDown();
        for (Job j : gcJobs) {
            assertThat(jobs.await(j.id(), WAIT).state()).isEqualTo(JobState.SUCCEEDED);
        }
        assertThat(maxInGc.get()).isEqualTo(1);
        assertThat(order).containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void log_manyLines_keepsTheNewestBounded() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        Job q = jobs.submit("demo", "a", "t", job -> {
            for (int i = 0; i < Jobs.LOG_LINES + 50; i++) {
                job.log("line " + i);
            }
            job.log("x".repeat(5000));
            return Map.of();
        });
        Job done = jobs.await(q.id(), WAIT);
        assertThat(done.log()).hasSize(Jobs.LOG_LINES);
        assertThat(done.log().get(0)).endsWith("line 51");
        assertThat(done.log().get(Jobs.LOG_LINES - 1).length()).isLessThan(RunningJob.MAX_LINE + 100);
    }

    @Test
    void advance_perItem_allocatesNothing() {
        RunningJob j = new RunningJob(1, "demo", "a", "t", job -> Map.of(), clock, 10);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 10_000; i++) { // warm up (JIT)
            j.advance(1, 4096);
            j.checkpoint();
        }
        long before = mx.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 1_000_000; i++) {
            j.advance(1, 4096);
            j.checkpoint();
        }
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated).as("bytes allocated by a million advance+checkpoint calls").isLessThan(64 * 1024);
        assertThat(j.snapshot().progress().itemsDone()).isEqualTo(1_010_000);
    }

    @Test
    void failingWork_endsFailedWithItsMessage() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        Job q = jobs.submit("reclaim", "gc", "t", job -> {
            throw new UnsupportedOperationException("reclaim-now is not built yet");
        });
        Job done = jobs.await(q.id(), WAIT);
        assertThat(done.state()).isEqualTo(JobState.FAILED);
        assertThat(done.error()).isEqualTo("reclaim-now is not built yet");
        assertThat(done.result()).isNull();
    }

    @Test
    void cancel_finishedJob_throwsAndUnknownIdIsUnknown() throws Exception {
        Jobs jobs = jobs(JobHistory.NONE);
        Job q = jobs.submit("demo", "a", "t", job -> Map.of());
        jobs.await(q.id(), WAIT);
        assertThatThrownBy(() -> jobs.cancel(q.id(), "t")).isInstanceOf(JobFinishedException.class)
                .hasMessageContaining("already succeeded");
        assertThat(jobs.get(q.id()).state()).isEqualTo(JobState.SUCCEEDED);
        assertThatThrownBy(() -> jobs.get(9999)).isInstanceOf(UnknownJobException.class);
        assertThatThrownBy(() -> jobs.cancel(9999, "t")).isInstanceOf(UnknownJobException.class);
    }

    @Test
    void list_newestFirst_filteredAndPaged_andIdsContinueAfterRestart() throws Exception {
        MemoryHistory history = new MemoryHistory();
        Jobs jobs = jobs(history);
        for (int i = 0; i < 5; i++) {
            Job q = jobs.submit(i % 2 == 0 ? "gc-cycle" : "fsck", "gc", "t", job -> Map.of());
            jobs.await(q.id(), WAIT);
        }
        Jobs.Page first = jobs.list(new Jobs.Query(null, null, null, 2));
        assertThat(first.jobs()).extracting(Job::id).containsExactly(5L, 4L);
        Jobs.Page second = jobs.list(new Jobs.Query(null, null, first.nextCursor(), 2));
        assertThat(second.jobs()).extracting(Job::id).containsExactly(3L, 2L);
        assertThat(jobs.list(new Jobs.Query(null, null, second.nextCursor(), 2)).nextCursor()).isNull();
        assertThat(jobs.list(new Jobs.Query("fsck", JobState.SUCCEEDED, null, 10)).jobs()).extracting(Job::id)
                .containsExactly(4L, 2L);
        assertThat(jobs.list(new Jobs.Query(null, JobState.RUNNING, null, 10)).jobs()).isEmpty();
        assertThatThrownBy(() -> new Jobs.Query(null, null, null, 0)).isInstanceOf(IllegalArgumentException.class);

        jobs.close(WAIT);
        assertThatThrownBy(() -> jobs.submit("demo", "a", "t", job -> Map.of())).isInstanceOf(JobsClosedException.class);
        Jobs again = jobs(history);
        assertThat(again.get(3).kind()).isEqualTo("gc-cycle");
        Job next = again.submit("demo", "a", "t", job -> Map.of());
        assertThat(next.id()).as("ids continue after the stored ones").isEqualTo(6);
    }

    @Test
    void close_runningJob_cancelledAtItsCheckpoint() throws Exception {
        MemoryHistory history = new MemoryHistory();
        Jobs jobs = jobs(history);
        CountDownLatch started = new CountDownLatch(1);
        Job q = jobs.submit("gc-cycle", "gc", "t", job -> {
            started.countDown();
            while (true) {
                job.checkpoint();
                Thread.sleep(1);
            }
        });
        Job queued = jobs.submit("fsck", "gc", "t", job -> Map.of());
        await(started);
        jobs.close(WAIT);
        assertThat(history.saved.get(q.id()).state()).isEqualTo(JobState.CANCELLED);
        assertThat(history.saved.get(q.id()).error()).contains("server stopped");
        assertThat(history.saved.get(queued.id()).state()).isEqualTo(JobState.CANCELLED);
    }

    @Test
    void onEnded_listenersHearEachEndedJobOnce_aFailingListenerHarmsNeither() throws Exception {
        Jobs jobs = jobs(new MemoryHistory());
        List<Job> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch two = new CountDownLatch(2);
        jobs.onEnded(j -> {
            throw new IllegalStateException("a broken listener");
        });
        jobs.onEnded(j -> {
            heard.add(j);
            two.countDown();
        });
        Job ok = jobs.submit("demo", "a", "x", job -> JobResults.of(null));
        Job bad = jobs.submit("demo", "a", "x", job -> {
            throw new IllegalArgumentException("no");
        });
        await(two);
        assertThat(jobs.await(ok.id(), WAIT).state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(jobs.await(bad.id(), WAIT).state()).isEqualTo(JobState.FAILED);
        assertThat(heard).extracting(Job::id).containsExactly(ok.id(), bad.id());
        assertThat(heard).extracting(Job::state).containsExactly(JobState.SUCCEEDED, JobState.FAILED);
    }
}
