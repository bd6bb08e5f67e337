package org.holdfast.client.daemon;

/**
 * The daemon's second need from the rest of the agent: telling the server how a run ended
 * (RUN_REPORT over the agent port; the CLI implements it, {@link RunReports} queues and retries).
 */
public interface RunReporter {
    /** Reports nothing (tests, and servers that cannot take reports). */
    RunReporter NONE = (config, run) -> null;

    /** Sends {@code run} to the server; null once it is recorded, else why not (one line). Never throws for a failure. */
    String report(AgentConfig config, RunRecord run);
}
