package org.holdfast.client.upload;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NeedDeadlineTest {
    private static final Duration TIMEOUT = Duration.ofMinutes(3);
    private final AtomicLong now = new AtomicLong(1_000);
    private final NeedDeadline deadline = new NeedDeadline(TIMEOUT, now::get);

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void awaitedRunsWithNoMessage_expireAfterTheTimeout() {
        advance(Duration.ofMinutes(2));
        assertThat(deadline.expired(true)).isFalse();
        advance(Duration.ofMinutes(1).plusSeconds(1));
        assertThat(deadline.expired(true)).isTrue();
    }

    @Test
    void minutesWithNothingAwaited_doNotCount() {
        // ten minutes of unchanged data read: polls see nothing, and no run is waiting
        for (int i = 0; i < 10; i++) {
            advance(Duration.ofMinutes(1));
            assertThat(deadline.expired(false)).isFalse();
        }
        // the next changed run is sent; two minutes of waiting are within the timeout
        advance(Duration.ofMinutes(2));
        assertThat(deadline.expired(true)).isFalse();
        advance(Duration.ofMinutes(2));
        assertThat(deadline.expired(true)).isTrue();
    }

    @Test
    void aMessageStartsTheSilenceOver() {
        advance(Duration.ofMinutes(2).plusSeconds(50));
        deadline.heard();
        advance(Duration.ofMinutes(2).plusSeconds(50));
        assertThat(deadline.expired(true)).isFalse();
        advance(Duration.ofSeconds(11));
        assertThat(deadline.expired(true)).isTrue();
    }
}
