package org.holdfast.server.app;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.holdfast.server.cluster.ClusterNode;
import org.holdfast.server.cluster.ClusterRole;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.WorkerStatus;
import org.springframework.stereotype.Component;

/** Publishes master/worker membership: a master's workers by state, a worker's registration (0 on a standalone server). */
@Component
public class ClusterMetrics implements MeterBinder {
    private final ClusterNode node;

    public ClusterMetrics(ClusterNode node) {
        this.node = node;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        for (MemberState s : MemberState.values()) {
            Gauge.builder("holdfast.cluster.workers", node, n -> n.role() != ClusterRole.MASTER ? 0
                            : n.workers().stream().filter(w -> w.state() == s).count())
                    .tag("state", s.wireName())
                    .description("workers a master knows, by state (up, late, lost)").register(r);
        }
        Gauge.builder("holdfast.cluster.registered", node, n -> {
            WorkerStatus st = n.workerStatus();
            return st != null && st.connected() ? 1 : 0;
        }).description("1 while this worker is registered with its master, else 0").register(r);
    }
}
