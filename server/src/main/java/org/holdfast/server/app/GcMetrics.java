package org.holdfast.server.app;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.gc.GcService;
import org.springframework.context.annotation.Conditional;
import org.springframework.stereotype.Component;

/** Publishes the garbage collector's state: GMA queue depth, updates, and what the last run found and freed. */
@Component
@Conditional(OnStandaloneOrMaster.class)
public class GcMetrics implements MeterBinder {
    private final GcService gc;

    public GcMetrics(GcService gc) {
        this.gc = gc;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        Gauge.builder("holdfast.gc.queue.depth", gc, g -> g.pipeline().queuedUpdates())
                .description("GC metadata updates logged but not yet applied to the GMA").register(r);
        FunctionCounter.builder("holdfast.gc.updates.logged", gc, g -> g.pipeline().updatesLogged())
                .description("GC metadata updates written to the GC log since start").register(r);
        FunctionCounter.builder("holdfast.gc.updates.applied", gc, g -> g.pipeline().updatesApplied())
                .description("GC metadata updates applied to the GMA since start").register(r);
        Gauge.builder("holdfast.gc.last.freed", gc, g -> g.lastCycle() == null ? 0 : g.lastCycle().sweep().freed())
                .description("blocks the last GC run freed").register(r);
        Gauge.builder("holdfast.gc.last.snapshots.deleted", gc,
                g -> g.lastCycle() == null ? 0 : g.lastCycle().snapshotsDeleted())
                .description("snapshots the last GC run deleted by retention").register(r);
        Gauge.builder("holdfast.gc.blocks.unreferenced.waiting", gc,
                g -> g.lastCycle() == null ? 0 : g.lastCycle().sweep().keptUnexpired())
                .description("unreferenced blocks the last sweep kept because their expiry lies ahead").register(r);
        Gauge.builder("holdfast.gc.sessions.protecting", gc, g -> g.guard().openSessions())
                .description("backup sessions whose blocks the sweep protects now").register(r);
        Gauge.builder("holdfast.gc.blocks.pinned", gc, g -> g.lastCycle() == null ? 0 : g.lastCycle().sweep().keptPinned())
                .description("unreferenced blocks the last sweep kept for a hold or keep-last pin").register(r);
    }
}
