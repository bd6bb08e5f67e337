package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The connection lane: tasks in order, one at a time, and busy until a period after its last task (the idle check's view). */
class SerialExecutorTest {

    @Test
    void tasks_runInSubmissionOrder_oneAtATime() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            SerialExecutor lane = new SerialExecutor(pool);
            List<Integer> seen = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(200);
            for (int i = 0; i < 200; i++) {
                int n = i;
                lane.execute(() -> {
                    synchronized (seen) {
                        seen.add(n);
                    }
                    done.countDown();
                });
            }
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(seen).hasSize(200).isSorted();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void busyWithin_runningTask_busy_thenBusyForThePeriodAfterItEnds_thenNot() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            SerialExecutor lane = new SerialExecutor(pool);
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            lane.execute(() -> {
                started.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(lane.busyWithin(0)).as("a task runs").isTrue();

            release.countDown();
            CountDownLatch drained = new CountDownLatch(1);
            lane.execute(drained::countDown);
            assertThat(drained.await(10, TimeUnit.SECONDS)).isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (lane.busyWithin(0) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(lane.busyWithin(0)).as("no task, nothing within no time").isFalse();
            assertThat(lane.busyWithin(TimeUnit.HOURS.toNanos(1)))
                    .as("its last task ended within the period: its reply may still be on the way").isTrue();
        } finally {
            pool.shutdownNow();
        }
    }
}
