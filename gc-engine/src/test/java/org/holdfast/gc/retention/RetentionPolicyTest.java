package org.holdfast.gc.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetentionPolicyTest {
    @Test
    void parse_periods_roundTrip() {
        assertThat(RetentionPolicy.parse("30d")).isEqualTo(new RetentionPolicy.Period(Duration.ofDays(30)));
        assertThat(RetentionPolicy.parse("12h")).isEqualTo(new RetentionPolicy.Period(Duration.ofHours(12)));
        assertThat(RetentionPolicy.parse("4w").toString()).isEqualTo("4w");
        assertThat(RetentionPolicy.parse("1y").toString()).isEqualTo("1y");
        assertThat(RetentionPolicy.parse(" 30D ").toString()).isEqualTo("30d");
    }

    @Test
    void parse_schedule_anySubsetAndCanonicalForm() {
        RetentionPolicy p = RetentionPolicy.parse("monthly=12, keep-last=3,daily=7,weekly=4");
        assertThat(p).isEqualTo(new RetentionPolicy.Schedule(3, 7, 4, 12, 0));
        assertThat(p.toString()).isEqualTo("keep-last=3,daily=7,weekly=4,monthly=12");
        assertThat(RetentionPolicy.parse(p.toString())).isEqualTo(p);
        assertThat(p.keepLast()).isEqualTo(3);
    }

    @Test
    void parse_badInput_clearError() {
        assertThatThrownBy(() -> RetentionPolicy.parse("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RetentionPolicy.parse("30x")).hasMessageContaining("30x");
        assertThatThrownBy(() -> RetentionPolicy.parse("daily=7,daily=3")).hasMessageContaining("twice");
        assertThatThrownBy(() -> RetentionPolicy.parse("hourly=3")).hasMessageContaining("hourly=3");
        assertThatThrownBy(() -> RetentionPolicy.parse("daily=0")).hasMessageContaining("keep something");
        assertThatThrownBy(() -> RetentionPolicy.parse("0d")).hasMessageContaining("between");
        assertThatThrownBy(() -> RetentionPolicy.parse("999999y")).hasMessageContaining("between");
    }

    @Test
    void parse_periodOutOfRange_echoedInPolicySyntaxNotJava() {
        assertThatThrownBy(() -> RetentionPolicy.parse("101y")).hasMessageEndingWith("got 36865d").hasMessageNotContaining("PT");
        assertThatThrownBy(() -> RetentionPolicy.parse("0h")).hasMessageEndingWith("got 0d").hasMessageNotContaining("PT");
    }
}
