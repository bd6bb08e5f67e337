package org.holdfast.server.app;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a start refused for a misspelt or unknown holdfast.* setting: each name, its source and the nearest setting. */
public class UnknownSettingFailureAnalyzer extends AbstractFailureAnalyzer<UnknownSettingException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnknownSettingException cause) {
        return new FailureAnalysis("Holdfast refused to start: these holdfast.* names are no setting (Spring would ignore them"
                + " and run with the defaults):\n  " + String.join("\n  ", cause.problems()),
                "Correct or remove each name (docs/operations.md, \"Configure\", lists the settings), then start again."
                        + " Nothing was opened or changed.", cause);
    }
}
