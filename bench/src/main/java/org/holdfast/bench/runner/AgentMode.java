package org.holdfast.bench.runner;

import java.util.List;
import java.util.Locale;

/**
 * How the bench runs a Holdfast agent command: {@link #FRESH}, a new JVM per backup or restore (a
 * one-shot CLI with no daemon), or {@link #DAEMON}, the same CLI call handed to a resident
 * {@code holdfast-agent daemon} of the simulated host, as an agent installed as a service runs it.
 */
public enum AgentMode {
    FRESH(""), DAEMON("-daemon");

    private final String suffix;

    AgentMode(String suffix) {
        this.suffix = suffix;
    }

    /** What the mode adds to a target's name: nothing for fresh, {@code -daemon} for daemon. */
    public String suffix() {
        return suffix;
    }

    /** The modes of a value of {@code --agent-mode}: fresh, daemon or both (fresh first). */
    public static List<AgentMode> parse(String option) {
        return switch (option.trim().toLowerCase(Locale.ROOT)) {
            case "fresh" -> List.of(FRESH);
            case "daemon" -> List.of(DAEMON);
            case "both" -> List.of(FRESH, DAEMON);
            default -> throw new IllegalArgumentException("--agent-mode must be fresh, daemon or both, not '" + option + "'");
        };
    }
}
