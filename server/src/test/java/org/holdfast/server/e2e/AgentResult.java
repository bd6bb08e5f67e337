package org.holdfast.server.e2e;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** What one run of the agent CLI did: exit code, output, and how long it took. */
public record AgentResult(List<String> args, int exitCode, String stdout, String stderr, Duration elapsed) {

    public boolean succeeded() {
        return exitCode == 0;
    }

    /** The non-blank lines of stderr. */
    public List<String> stderrLines() {
        return Arrays.stream(stderr.split("\\R")).filter(l -> !l.isBlank()).toList();
    }

    @Override
    public String toString() {
        return "agent " + String.join(" ", args) + "\n  exit " + exitCode + " after " + elapsed.toMillis() + " ms"
                + "\n  stdout: " + clip(stdout) + "\n  stderr: " + clip(stderr);
    }

    private static String clip(String s) {
        return s.length() <= 3000 ? s : s.substring(0, 1500) + "\n...\n" + s.substring(s.length() - 1500);
    }
}
