package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class RateLimitedLogTest {
    @Test
    void info_floodWithinOneInterval_oneLineThenTheCountOfThoseLeftOut() throws Exception {
        List<String> lines = new ArrayList<>();
        // an interval of 1 s: the 1000 calls must all fall in it, and a loaded machine (or a GC pause) can stretch them
        RateLimitedLog log = new RateLimitedLog(new Recording(lines), Duration.ofSeconds(1));
        for (int i = 0; i < 1000; i++) {
            log.info("refused " + i);
        }
        assertThat(lines).containsExactly("refused 0");
        assertThat(log.suppressed()).isEqualTo(999);
        Thread.sleep(1100);
        log.info("refused again");
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).isEqualTo("refused again (999 similar lines left out since the last one)");
    }

    @Test
    void warning_sharesTheIntervalWithInfoAndLogsAtWarning() {
        List<String> lines = new ArrayList<>();
        RateLimitedLog log = new RateLimitedLog(new Recording(lines), Duration.ofSeconds(60));
        log.warning("refused worker w1");
        log.info("bad frame");
        log.warning("refused worker w2");
        assertThat(lines).containsExactly("WARNING refused worker w1");
        assertThat(log.suppressed()).isEqualTo(2);
    }

    private record Recording(List<String> lines) implements System.Logger {
        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level == Level.WARNING ? "WARNING " + msg : msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level == Level.WARNING ? "WARNING " + format : format);
        }

        @Override
        public void log(Level level, Supplier<String> msgSupplier) {
            lines.add(msgSupplier.get());
        }
    }
}
