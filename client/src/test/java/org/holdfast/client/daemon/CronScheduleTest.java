package org.holdfast.client.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.ZoneId;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CronScheduleTest {
    private static final ZoneId UTC = ZoneId.of("UTC");

    private static ZonedDateTime at(String local) {
        return java.time.LocalDateTime.parse(local).atZone(UTC);
    }

    private static String next(String cron, String after) {
        return CronSchedule.parse(cron).next(at(after)).orElseThrow().toLocalDateTime().toString();
    }

    @ParameterizedTest(name = "{0} after {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "*/5 * * * *        | 2026-11-25T20:41:07 | 2026-11-25T20:45",
        "0 2 * * *          | 2026-11-25T02:00:00 | 2026-11-26T02:00",
        "0 2 * * *          | 2026-11-25T01:59:59 | 2026-11-25T02:00",
        "*/3 * * * * *      | 2026-11-25T20:41:07 | 2026-11-25T20:41:09",
        "15,45 * * * * *    | 2026-11-25T20:41:50 | 2026-11-25T20:42:15",
        "0 0 9-17/4 * * MON-FRI | 2026-11-27T17:00:00 | 2026-11-30T09:00",
        "30 23 L-NONE * *   | 2026-01-01T00:00:00 | x",
        "0 0 1 JAN *        | 2026-11-25T00:00:00 | 2027-01-01T00:00",
        "0 0 * * 7          | 2026-11-25T00:00:00 | 2026-11-29T00:00",
        "0 0 * * sun        | 2026-11-25T00:00:00 | 2026-11-29T00:00",
        "0 0 29 2 *         | 2026-03-01T00:00:00 | 2028-02-29T00:00",
        "@daily             | 2026-11-25T20:41:07 | 2026-11-26T00:00",
        "@hourly            | 2026-11-25T20:41:07 | 2026-11-25T21:00",
        "0 12 31 * *        | 2026-11-25T00:00:00 | 2026-12-31T12:00",
    })
    void next_expression_firstMatchStrictlyAfter(String cron, String after, String expected) {
        if (expected.equals("x")) {
            assertThatThrownBy(() -> CronSchedule.parse(cron)).isInstanceOf(IllegalArgumentException.class);
            return;
        }
        assertThat(next(cron, after)).isEqualTo(expected);
    }

    @Test
    void next_bothDayFieldsRestricted_eitherMatches() {
        // the 1st of the month or any Friday, as Vixie cron reads it: Friday 27 Nov comes before 1 Dec
        assertThat(next("0 0 1 * FRI", "2026-11-25T00:00:00")).isEqualTo("2026-11-27T00:00");
        assertThat(next("0 0 1 * FRI", "2026-11-27T00:00:00")).isEqualTo("2026-12-01T00:00");
    }

    @Test
    void next_calledRepeatedly_stepsThroughEveryMatch() {
        CronSchedule s = CronSchedule.parse("*/20 * * * * *");
        ZonedDateTime t = at("2026-11-25T23:59:30");
        StringBuilder seen = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            t = s.next(t).orElseThrow();
            seen.append(t.toLocalDateTime()).append(' ');
        }
        assertThat(seen.toString().strip()).isEqualTo("2026-11-25T23:59:40 2026-11-26T00:00 2026-11-26T00:00:20 2026-11-26T00:00:40");
    }

    @Test
    void next_springForwardGap_neverReturnsTimeBeforeAfter() {
        ZoneId berlin = ZoneId.of("Europe/Berlin");
        ZonedDateTime before = java.time.LocalDateTime.parse("2026-03-29T01:59:00").atZone(berlin);
        ZonedDateTime n = CronSchedule.parse("*/30 * * * *").next(before).orElseThrow();
        assertThat(n).isAfter(before);
        assertThat(n.toLocalTime().toString()).isEqualTo("03:00"); // 02:00 to 03:00 does not exist that night
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "61 * * * *        | minute field '61': 61 is out of range 0-59",
        "* 24 * * *        | hour field '24': 24 is out of range 0-23",
        "* * 0 * *         | day-of-month field '0': 0 is out of range 1-31",
        "* * * 13 *        | month field '13': 13 is out of range 1-12",
        "* * * FOO *       | month field 'FOO': 'FOO' is not a number or a name like JAN",
        "* * * * 8         | day-of-week field '8': 8 is out of range 0-7",
        "5-1 * * * *       | minute field '5-1': range 5-1 runs backwards",
        "*/0 * * * *       | minute field '*/0': 0 is out of range 1-60",
        "* * * *           | expected 5 fields",
        "* * * * * * *     | found 7",
        "0 0 30 2 *        | never fires",
        "@fortnightly      | unknown shorthand '@fortnightly'",
    })
    void parse_badExpression_namesTheFieldAndReason(String cron, String message) {
        assertThatThrownBy(() -> CronSchedule.parse(cron)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void parse_blank_refused() {
        assertThatThrownBy(() -> CronSchedule.parse("  ")).hasMessage("empty cron expression");
    }
}
