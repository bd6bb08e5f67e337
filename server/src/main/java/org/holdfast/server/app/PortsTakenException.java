package org.holdfast.server.app;

import java.util.List;

/** A start refused before anything opened: ports it would listen on are taken (or named twice). */
public final class PortsTakenException extends IllegalStateException {
    private final List<String> problems;

    PortsTakenException(List<String> problems) {
        super("cannot listen on " + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    /** One line per port: the setting, what it serves, the address and why it cannot be bound. */
    public List<String> problems() {
        return problems;
    }
}
