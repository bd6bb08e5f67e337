package org.holdfast.server.app;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches unless {@code holdfast.cluster.role} is {@code worker}: what only a standalone server or a
 * master uses (data store, catalog, dedup engine, agent port, GC, jobs, verify, statistics, and the
 * REST endpoints over them). A worker serves the master's dedup calls from its own index, so it
 * opens none of these: neither their heap nor their files nor their threads. Its REST answers the
 * endpoints it lacks with the problem {@code not-on-a-worker} ({@code api.NotOnAWorkerFilter}).
 */
public final class OnStandaloneOrMaster extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        String role = context.getEnvironment().getProperty("holdfast.cluster.role", "standalone");
        boolean worker = "worker".equalsIgnoreCase(role.trim()); // any case, as ClusterRole.parse
        return worker ? ConditionOutcome.noMatch("holdfast.cluster.role=worker: a worker opens only its dedup index")
                : ConditionOutcome.match("holdfast.cluster.role=" + role.trim());
    }
}
