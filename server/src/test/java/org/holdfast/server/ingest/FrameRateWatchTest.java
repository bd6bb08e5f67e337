package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The minimum-rate rule of a partly received frame: overdue only once the time the server spent
 * reading it exceeds its deadline (size at the minimum rate plus the grace); paused reading and a
 * new frame do not count against it.
 */
class FrameRateWatchTest {
    private static final long MS = 1_000_000L;
    // 1000 bytes/s and 1 s grace: a 1000-byte frame gets 2 s
    private final IngestLimits limits = IngestLimits.DEFAULTS.withFrameRate(1000, Duration.ofSeconds(1));

    @Test
    void overdue_trickledFrame_onlyAfterItsDeadlineOfReading() {
        FrameRateWatch watch = new FrameRateWatch(limits, 0);
        assertThat(watch.overdue(100 * MS, 1000, 5, true)).as("a new frame starts its clock").isFalse();
        assertThat(watch.overdue(2_000 * MS, 1000, 5, true)).as("1.9 s of 2 s").isFalse();
        assertThat(watch.overdue(2_200 * MS, 1000, 5, true)).as("2.1 s of 2 s").isTrue();
    }

    @Test
    void overdue_whileTheServerPausedReading_doesNotCount() {
        FrameRateWatch watch = new FrameRateWatch(limits, 0);
        watch.overdue(0, 1000, 5, true);
        assertThat(watch.overdue(10_000 * MS, 1000, 5, false)).as("10 s paused by the server").isFalse();
        assertThat(watch.overdue(11_000 * MS, 1000, 5, true)).as("1 s of reading").isFalse();
        assertThat(watch.overdue(12_500 * MS, 1000, 5, true)).as("2.5 s of reading").isTrue();
    }

    @Test
    void overdue_nextFrameOrNoFrame_startsAgain() {
        FrameRateWatch watch = new FrameRateWatch(limits, 0);
        watch.overdue(0, 1000, 5, true);
        assertThat(watch.overdue(1_900 * MS, 1000, 6, true)).as("frame 6 began: its own clock").isFalse();
        assertThat(watch.overdue(3_800 * MS, 1000, 6, true)).isFalse();
        assertThat(watch.overdue(3_900 * MS, 0, 7, true)).as("nothing partly received").isFalse();
        assertThat(watch.overdue(9_000 * MS, 1000, 7, true)).as("a new partial frame starts its clock").isFalse();
        assertThat(FrameRateWatch.tickMillis(limits)).isEqualTo(250);
    }
}
