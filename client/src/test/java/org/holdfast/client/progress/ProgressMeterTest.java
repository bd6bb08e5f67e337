package org.holdfast.client.progress;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProgressMeterTest {

    @Test
    void advance_enabled_redrawsOneLineWithRateAndEta() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        ProgressMeter m = new ProgressMeter(new PrintStream(buf, true, StandardCharsets.UTF_8), true, "backup v");
        m.start(10L << 20);
        m.advance(5L << 20);
        String line = buf.toString(StandardCharsets.UTF_8);
        assertThat(line).startsWith("\rbackup v").contains("50%").contains("MB/s").contains("ETA").doesNotContain("\n");
        m.finish();
        assertThat(buf.toString(StandardCharsets.UTF_8)).endsWith("\r");
        assertThat(m.done()).isEqualTo(5L << 20);
    }

    @Test
    void advance_disabled_printsNothing() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        ProgressMeter m = new ProgressMeter(new PrintStream(buf, true, StandardCharsets.UTF_8), false, "x");
        m.start(100);
        m.advance(50);
        m.finish();
        assertThat(buf.size()).isZero();
    }

    @Test
    void sizesAndDurations_formatForPeople() {
        assertThat(Sizes.format(1023)).isEqualTo("1023 B");
        assertThat(Sizes.format(1536)).isEqualTo("1.5 KiB");
        assertThat(Sizes.format(3L << 30)).isEqualTo("3.0 GiB");
        assertThat(Durations.format(42)).isEqualTo("42s");
        assertThat(Durations.format(185)).isEqualTo("3m05s");
        assertThat(Durations.format(7800)).isEqualTo("2h10m");
    }
}
