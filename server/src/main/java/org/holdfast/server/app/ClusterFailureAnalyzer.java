package org.holdfast.server.app;

import org.holdfast.server.cluster.ClusterSetupException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a master/worker setting that cannot work into a short report: what is wrong and where the settings are explained. */
public class ClusterFailureAnalyzer extends AbstractFailureAnalyzer<ClusterSetupException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ClusterSetupException cause) {
        return new FailureAnalysis("Holdfast cannot start in master/worker mode: " + cause.getMessage(),
                "Fix the holdfast.cluster.* settings (docs/operations.md, \"Master/worker mode (preview)\"), or leave"
                        + " holdfast.cluster.role unset (standalone).", cause);
    }
}
