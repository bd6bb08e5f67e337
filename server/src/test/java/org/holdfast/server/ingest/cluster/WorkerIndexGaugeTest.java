package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import org.holdfast.server.app.WorkerIndexMetrics;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A worker that registers again (a restart, a reconnect) keeps its one gauge, and the master logs no warning for it. */
class WorkerIndexGaugeTest {
    @Test
    void reRegistration_keepsOneGauge_withoutAWarning() {
        Logger micrometer = (Logger) LoggerFactory.getLogger(MeterRegistry.class);
        ListAppender<ILoggingEvent> seen = new ListAppender<>();
        seen.start();
        micrometer.addAppender(seen);
        try {
            DedupLinks links = new DedupLinks();
            MeterRegistry registry = new SimpleMeterRegistry();
            new WorkerIndexMetrics(links).bindTo(registry);
            for (int i = 0; i < 3; i++) {
                links.add(1, DedupFramesBadInputTest.masterLink(new EmbeddedChannel()));
            }
            assertThat(registry.find("holdfast.cluster.worker.index.entries").gauges()).hasSize(1);
            assertThat(seen.list).as("a worker's reconnect is routine: no WARN in the master's log")
                    .noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN));
        } finally {
            micrometer.detachAppender(seen);
        }
    }
}
