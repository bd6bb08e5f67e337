package org.holdfast.client;

/**
 * A failure the agent reports to its user as one line: what went wrong, what to do next, and the
 * process exit code. Everything below the CLI throws this (or lets a bug surface as something else).
 */
public class AgentException extends RuntimeException {
    private final ExitCode exitCode;
    private final String hint;

    public AgentException(ExitCode exitCode, String message, String hint) {
        this(exitCode, message, hint, null);
    }

    public AgentException(ExitCode exitCode, String message, String hint, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
        this.hint = hint;
    }

    /** How the process should exit. */
    public ExitCode exitCode() {
        return exitCode;
    }

    /** What the user should do next; may be null. */
    public String hint() {
        return hint;
    }
}
