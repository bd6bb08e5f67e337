package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.verify.DamageReport;
import org.holdfast.server.verify.VerifyJobs;
import org.springframework.context.annotation.Conditional;
import org.springframework.stereotype.Component;

/** Publishes verification: bad blocks now, flagged volumes, repairs, and what verify passes read. */
@Component
@Conditional(OnStandaloneOrMaster.class)
public class VerifyMetrics implements MeterBinder {
    private final VerifyJobs jobs;
    private final DamageReport damage;
    private final DataStore store;

    public VerifyMetrics(VerifyJobs jobs, DamageReport damage, DataStore store) {
        this.jobs = jobs;
        this.damage = damage;
        this.store = store;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        Gauge.builder("holdfast.verify.bad.blocks", damage, d -> d.badBlocks().count())
                .description("stored blocks marked bad (failed a check) and not yet repaired").register(r);
        Gauge.builder("holdfast.verify.damaged.volumes", damage, d -> d.damagedVolumes().size())
                .description("volumes whose snapshots reference a bad block (as of their last verify)").register(r);
        FunctionCounter.builder("holdfast.verify.repaired.blocks", store, s -> s.repairedBlocks() + s.badBlocks().repairedOnWorkers())
                .description("bad blocks repaired in place by an upload of the same content since start").register(r);
        FunctionCounter.builder("holdfast.verify.runs", jobs, VerifyJobs::runsTotal)
                .description("verify passes finished since start").register(r);
        FunctionCounter.builder("holdfast.verify.blocks.read", jobs, VerifyJobs::blocksReadTotal)
                .description("blocks verify passes read and checked since start").register(r);
        FunctionCounter.builder("holdfast.verify.bytes.read", jobs, VerifyJobs::bytesReadTotal)
                .description("stored bytes verify passes read since start").register(r);
        Gauge.builder("holdfast.verify.last.run.seconds", jobs, j -> j.lastEndedMillis() / 1000.0)
                .description("when the last verify pass ended, epoch seconds (0: none since start)").register(r);
        Gauge.builder("holdfast.verify.last.damaged.snapshots", jobs,
                        j -> j.lastReport() == null ? 0 : j.lastReport().damagedSnapshots().size())
                .description("snapshots the last verify pass found referencing bad blocks").register(r);
    }
}
