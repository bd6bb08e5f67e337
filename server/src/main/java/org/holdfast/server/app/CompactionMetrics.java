package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.gc.GcService;
import org.springframework.context.annotation.Conditional;
import org.springframework.stereotype.Component;

/** Publishes online compaction's totals: bytes reclaimed and copied, logs rewritten and deleted, seconds spent. */
@Component
@Conditional(OnStandaloneOrMaster.class)
public class CompactionMetrics implements MeterBinder {
    private final GcService gc;

    public CompactionMetrics(GcService gc) {
        this.gc = gc;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        FunctionCounter.builder("holdfast.gc.compaction.reclaimed", gc, g -> g.compactionTotals().bytesReclaimed())
                .baseUnit("bytes").description("bytes of data logs given back by compaction").register(r);
        FunctionCounter.builder("holdfast.gc.compaction.copied", gc, g -> g.compactionTotals().bytesCopied())
                .baseUnit("bytes").description("live record bytes compaction rewrote").register(r);
        FunctionCounter.builder("holdfast.gc.compaction.seconds", gc, g -> g.compactionTotals().seconds())
                .baseUnit("seconds").description("time spent compacting").register(r);
        FunctionCounter.builder("holdfast.gc.compaction.logs.rewritten", gc, g -> g.compactionTotals().logsRewritten())
                .description("data logs compaction rewrote").register(r);
        FunctionCounter.builder("holdfast.gc.compaction.logs.deleted", gc, g -> g.compactionTotals().logsDeleted())
                .description("data logs compaction deleted (nothing live left in them)").register(r);
    }
}
