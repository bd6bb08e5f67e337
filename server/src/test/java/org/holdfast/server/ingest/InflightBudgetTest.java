package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class InflightBudgetTest {
    @Test
    void tryReserve_overTheLimit_refusedAndWokenOnceByTheNextRelease() {
        InflightBudget b = new InflightBudget(100);
        AtomicInteger woken = new AtomicInteger();
        assertThat(b.tryReserve(80, woken::incrementAndGet)).isTrue();
        assertThat(b.tryReserve(30, woken::incrementAndGet)).isFalse();
        assertThat(b.used()).isEqualTo(80);
        assertThat(b.waiting()).isEqualTo(1);
        b.release(80);
        assertThat(woken).hasValue(1);
        assertThat(b.waiting()).isZero();
        assertThat(b.used()).isZero();
        b.release(0);
        assertThat(woken).as("a waiter is woken once").hasValue(1);
        assertThat(b.tryReserve(100, woken::incrementAndGet)).as("exactly the limit fits").isTrue();
    }
}
