package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The refresh a GC job asks for is not folded into a backup's that is still waiting: joined, it
 * waited with it and then ran paced, skipping the survey, so a large store showed what GC freed
 * only up to 20 survey lengths later (while the pacing promises the GC survey is not held back).
 */
class StatsRefreshGcJoinTest {

    @Test
    void refreshSoon_gcJobWhileABackupsRefreshWaits_getsItsOwnRefreshAtOnce() throws Exception {
        // no statistics: each refresh fails at its first call and is logged; only the schedule is looked at
        StatsConfiguration.StatsRefresh refresh = new StatsConfiguration.StatsRefresh(null, null, null,
                Duration.ofHours(1), Duration.ofHours(1));
        refresh.start();
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            ScheduledThreadPoolExecutor executor = (ScheduledThreadPoolExecutor) refresh.executor();
            executor.execute(() -> { // holds the one scheduler thread, so what is scheduled stays in the queue
                busy.countDown();
                await(release);
            });
            assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
            refresh.refreshSoon(Duration.ofDays(365_000), true); // a backup's, waiting for its spacing
            assertThat(oneShots(executor)).as("the backup's refresh waits").isEqualTo(1);
            refresh.refreshSoon(Duration.ZERO, false); // a GC job ended
            assertThat(oneShots(executor)).as("the GC job's refresh is scheduled, not joined to the backup's").isEqualTo(2);
            assertThat(executor.getQueue().stream().map(r -> (RunnableScheduledFuture<?>) r)
                    .filter(f -> !f.isPeriodic()).mapToLong(f -> f.getDelay(TimeUnit.MILLISECONDS)).min().orElseThrow())
                    .as("and at once").isLessThanOrEqualTo(0);
            refresh.refreshSoon(Duration.ofDays(365_000), true);
            assertThat(oneShots(executor)).as("a second backup still joins the waiting one").isEqualTo(2);
        } finally {
            release.countDown();
            refresh.stop();
        }
    }

    private static long oneShots(ScheduledThreadPoolExecutor executor) {
        return executor.getQueue().stream().filter(r -> !((RunnableScheduledFuture<?>) r).isPeriodic()).count();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
