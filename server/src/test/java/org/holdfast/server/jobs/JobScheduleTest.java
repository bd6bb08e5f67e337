package org.holdfast.server.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class JobScheduleTest {
    @Test
    void start_submitsEveryInterval_butSkipsTurnsWhileOneOfTheKindRuns() throws Exception {
        Jobs jobs = new Jobs(new JobsTest.MemoryHistory(), new ManualClock(1_700_000_000_000L));
        AtomicInteger submitted = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        try (JobSchedule s = JobSchedule.start("tick", Duration.ofMillis(20), jobs, () -> {
            submitted.incrementAndGet();
            jobs.submit("tick", "tick", "schedule", job -> {
                started.countDown();
                release.await();
                return Map.of();
            });
        })) {
            assertThat(started.await(10, TimeUnit.SECONDS)).as("the first turn submits").isTrue();
            Thread.sleep(200); // about ten turns while the first job still runs
            assertThat(submitted.get()).as("no turn submits while one runs").isEqualTo(1);
            release.countDown();
            long deadline = System.currentTimeMillis() + 10_000;
            while (submitted.get() < 2 && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            assertThat(submitted.get()).as("turns go on once it ended").isGreaterThanOrEqualTo(2);
        } finally {
            jobs.close(Duration.ofSeconds(5));
        }
    }
}
