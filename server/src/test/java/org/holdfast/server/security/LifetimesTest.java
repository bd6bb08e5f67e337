package org.holdfast.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LifetimesTest {
    @Test
    void parse_operatorForms_durations() {
        assertThat(Lifetimes.parse("30d")).isEqualTo(Duration.ofDays(30));
        assertThat(Lifetimes.parse("12h")).isEqualTo(Duration.ofHours(12));
        assertThat(Lifetimes.parse("2w")).isEqualTo(Duration.ofDays(14));
        assertThat(Lifetimes.parse("P30D")).isEqualTo(Duration.ofDays(30));
        assertThat(Lifetimes.parse("36500d")).isEqualTo(Duration.ofDays(36_500));
    }

    @Test
    void parse_zeroNegativeOrGarbage_illegalArgumentNamingTheForms() {
        for (String s : new String[] {"0d", "-5d", "P-1D", "PT0S", "1y", "d", "", "5"}) {
            assertThatThrownBy(() -> Lifetimes.parse(s)).as(s).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("use e.g. 30d");
        }
    }

    @Test
    void parse_longerThan100YearsOrOverflowing_illegalArgumentNotArithmetic() {
        // 99999999999999d was a 500 (long overflow computing the expiry), 9999999999d an expiry in year 27 million
        for (String s : new String[] {"36501d", "9999999999d", "99999999999999d", "9223372036854775807w", "P99999999999D"}) {
            assertThatThrownBy(() -> Lifetimes.parse(s)).as(s).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(s);
        }
    }
}
