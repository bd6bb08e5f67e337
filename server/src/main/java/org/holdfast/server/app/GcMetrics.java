package org.holdfast.server.app;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.gc.GcService;
import org.springframework.stereotype.Component;

/** Publishes the garbage collector's state: GMA queue depth, updates, and what the last run found and freed. */
@Component
public class GcMetrics implements MeterBinder {
    private final GcService gc;

    public GcMetrics(GcService gc) {
        this.gc = gc;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        Gauge.builder("holdfast.gc.queue.depth", gc, g -> g.pipeline().queuedUpdates()).register(r);
        Gauge.builder("holdfast.gc.updates.logged", gc, g -> g.pipeline().updatesLogged()).register(r);
        Gauge.builder("holdfast.gc.updates.applied", gc, g -> g.pipeline().updatesApplied()).register(r);
        Gauge.builder("holdfast.gc.last.freed", gc, g -> g.lastCycle() == null ? 0 : g.lastCycle().sweep().freed()).register(r);
        Gauge.builder("holdfast.gc.last.snapshots.deleted", gc,
                g -> g.lastCycle() == null ? 0 : g.lastCycle().snapshotsDeleted()).register(r);
        Gauge.builder("holdfast.gc.blocks.unreferenced.waiting", gc,
                g -> g.lastCycle() == null ? 0 : g.lastCycle().sweep().keptUnexpired()).register(r);
        Gauge.builder("holdfast.gc.sessions.protecting", gc, g -> g.guard().openSessions()).register(r);
        Gauge.builder("holdfast.gc.blocks.pinned", gc, g -> g.lastCycle() == null ? 0 : g.lastCycle().sweep().keptPinned())
                .register(r);
    }
}
