package org.holdfast.gc.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class RangeMaxExpiryTest {
    @Test
    void max_randomOperations_matchesNaiveScan() {
        Random r = new Random(42);
        RangeMaxExpiry rm = new RangeMaxExpiry();
        TreeMap<Long, Long> naive = new TreeMap<>();
        long seq = 0;
        for (int step = 0; step < 5000; step++) {
            int op = r.nextInt(10);
            if (op < 4 || naive.isEmpty()) {
                seq += 1 + r.nextInt(3); // gaps: deleted or never seen sequences
                long e = r.nextInt(1_000_000);
                rm.append(seq, e);
                naive.put(seq, e);
            } else if (op < 5) {
                long s = naive.keySet().stream().skip(r.nextInt(naive.size())).findFirst().orElseThrow();
                long e = r.nextBoolean() ? RangeMaxExpiry.NONE : r.nextInt(2_000_000);
                rm.setExpiry(s, e);
                naive.put(s, e);
            } else {
                long a = r.nextInt((int) seq + 2);
                long b = a + r.nextInt(40) - 5;
                long want = RangeMaxExpiry.NONE;
                for (var en : naive.subMap(a, true, Math.max(a, b), true).entrySet()) {
                    if (b >= a) {
                        want = Math.max(want, en.getValue());
                    }
                }
                assertThat(rm.max(a, b)).as("max(%d,%d)", a, b).isEqualTo(want);
            }
        }
        assertThat(rm.size()).isEqualTo(naive.size());
    }

    @Test
    void append_sequenceNotIncreasing_rejected() {
        RangeMaxExpiry rm = new RangeMaxExpiry();
        rm.append(5, 10);
        assertThatThrownBy(() -> rm.append(5, 11)).isInstanceOf(IllegalArgumentException.class);
        assertThat(rm.max(1, 100)).isEqualTo(10);
        rm.remove(5);
        assertThat(rm.max(1, 100)).isEqualTo(RangeMaxExpiry.NONE);
    }
}
