package org.holdfast.server.stats;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SurveyPacingTest {

    @Test
    void minAge_smallStoreKeepsItsInterval_largeStoreWaitsTwentyTimesItsSurvey() {
        SurveyPacing p = new SurveyPacing();
        assertThat(p.minAgeMillis(300_000)).as("before any survey: the interval").isEqualTo(300_000);
        assertThat(p.minAgeMillis(0)).isZero();
        p.took(200); // a small store: 0.2 s
        assertThat(p.minAgeMillis(300_000)).isEqualTo(300_000);
        assertThat(p.minAgeMillis(0)).as("after a backup: 4 s at the least").isEqualTo(4_000);
        p.took(50_000); // 100 M blocks: about 50 s
        assertThat(p.minAgeMillis(300_000)).as("at most a twentieth of one core").isEqualTo(1_000_000);
        assertThat(p.minAgeMillis(0)).isEqualTo(1_000_000);
    }
}
