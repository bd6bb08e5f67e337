package org.holdfast.server.ingest;

/** The agent port cannot be opened (taken by another process, or an address not of this host); the message names host, port and settings. */
public final class AgentPortUnavailableException extends IllegalStateException {
    public AgentPortUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
