package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** When a worker's sweep warns that answered-but-unprotected stores hold its horizon back (WorkerRangeSweep.heldBackTooLong). */
class WorkerRangeSweepHeldBackTest {
    private static final long NOW = 1_000_000_000_000L;

    @Test
    void defaultGrace_warnsPastAnHourNotBefore() {
        Duration grace = Duration.ofHours(24);
        assertThat(WorkerRangeSweep.heldBackTooLong(NOW, NOW, grace)).as("nothing held back").isFalse();
        assertThat(WorkerRangeSweep.heldBackTooLong(NOW, NOW - Duration.ofMinutes(59).toMillis(), grace))
                .as("a session's late landing is normal").isFalse();
        assertThat(WorkerRangeSweep.heldBackTooLong(NOW, NOW - Duration.ofMinutes(61).toMillis(), grace)).isTrue();
    }

    @Test
    void shortGrace_warnsPastOneGrace() {
        Duration grace = Duration.ofMillis(400);
        assertThat(WorkerRangeSweep.heldBackTooLong(NOW, NOW - 400, grace)).isFalse();
        assertThat(WorkerRangeSweep.heldBackTooLong(NOW, NOW - 401, grace)).isTrue();
    }
}
