package org.holdfast.server.app;

import java.util.List;

/** Names the {@code holdfast.*} settings that do not exist, each with its source and the nearest setting that does. */
final class UnknownSettingException extends RuntimeException {
    private final List<String> problems;

    UnknownSettingException(List<String> problems) {
        super("unknown setting" + (problems.size() == 1 ? " " : "s ") + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    /** One line per unknown name: the name, where it came from, the advice. */
    List<String> problems() {
        return problems;
    }
}
