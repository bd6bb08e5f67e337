package org.holdfast.server.app;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a GC bookkeeping mode that does not match the store into a short report saying why and what to do. */
public class GcModeFailureAnalyzer extends AbstractFailureAnalyzer<GcBookkeepingMode.GcModeMismatchException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, GcBookkeepingMode.GcModeMismatchException cause) {
        return new FailureAnalysis("Holdfast refuses to start: " + cause.getMessage(), cause.action(), cause);
    }
}
