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

    @Test
    void reportMinAge_smallStoreKeepsTheMaximumAge_slowSurveysHoldReportsBackToo() {
        SurveyPacing p = new SurveyPacing();
        p.took(200); // small: a report asked for 1 ms-fresh figures gets them (paced, it took one up to 4 s old)
        assertThat(p.reportMinAgeMillis(1)).isEqualTo(1);
        assertThat(p.reportMinAgeMillis(300_000)).isEqualTo(300_000);
        p.took(SurveyPacing.SLOW_SURVEY_MILLIS);
        assertThat(p.reportMinAgeMillis(1)).isEqualTo(20 * SurveyPacing.SLOW_SURVEY_MILLIS);
        p.took(50_000);
        assertThat(p.reportMinAgeMillis(300_000)).as("a large store: at most a twentieth of one core").isEqualTo(1_000_000);
    }
}
