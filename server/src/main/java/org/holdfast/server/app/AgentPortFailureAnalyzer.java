package org.holdfast.server.app;

import org.holdfast.server.ingest.AgentPortUnavailableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns an agent port that cannot be opened into a short report, as Spring does for a taken HTTP port. */
public class AgentPortFailureAnalyzer extends AbstractFailureAnalyzer<AgentPortUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, AgentPortUnavailableException cause) {
        return new FailureAnalysis("Holdfast " + cause.getMessage(),
                "Stop the process that listens on that port (another Holdfast server?), or start with another"
                        + " --holdfast.ingest.port=N (and --holdfast.ingest.host=ADDRESS to listen on one address); agents then"
                        + " name that port in --server HOST:PORT.", cause);
    }
}
