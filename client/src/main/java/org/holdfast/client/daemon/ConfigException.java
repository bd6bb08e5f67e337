package org.holdfast.client.daemon;

import java.nio.file.Path;
import java.util.List;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/** A configuration file the daemon refuses: every problem found, each with its line and field. */
public final class ConfigException extends AgentException {
    private final List<String> problems;

    ConfigException(Path file, List<String> problems) {
        super(ExitCode.USAGE, "config " + file + " has " + problems.size() + (problems.size() == 1 ? " error" : " errors")
                + ":\n  " + String.join("\n  ", problems) + "\n", "fix the file and start the daemon again (docs/agent.md, \"Configuration reference\")");
        this.problems = List.copyOf(problems);
    }

    /** One line per problem: {@code line N, FIELD: what is wrong}. */
    public List<String> problems() {
        return problems;
    }
}
