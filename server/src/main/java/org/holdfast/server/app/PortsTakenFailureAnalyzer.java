package org.holdfast.server.app;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports every taken port of a refused start at once, with what to do. */
public class PortsTakenFailureAnalyzer extends AbstractFailureAnalyzer<PortsTakenException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, PortsTakenException cause) {
        return new FailureAnalysis("Holdfast cannot listen on these ports (nothing was opened or created):\n  "
                + String.join("\n  ", cause.problems()),
                "Stop the process that listens there (another Holdfast server? `ss -ltnp` names it), or start with other ports:"
                        + " --server.port=N, --holdfast.ingest.port=N (agents then name it in --server HOST:PORT),"
                        + " --holdfast.cluster.port=N on a master (workers name it in holdfast.cluster.master).", cause);
    }
}
