package org.holdfast.server.app;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a {@code holdfast.cluster.data} the node or store cannot start with into a short report saying why and what to do. */
public class ClusterDataFailureAnalyzer extends AbstractFailureAnalyzer<ClusterDataMode.ClusterDataModeException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ClusterDataMode.ClusterDataModeException cause) {
        return new FailureAnalysis("Holdfast refuses to start: " + cause.getMessage(), cause.action(), cause);
    }
}
