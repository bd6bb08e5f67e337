package org.holdfast.server.ingest;

import org.holdfast.common.protocol.RunReport;
import org.holdfast.server.security.AccessPrincipal;

/**
 * What the ingest port tells statistics about its agents: a connection authenticated (once per
 * connection), a backup ended (once per session, committed or not), and bytes moved (once per
 * frame, never per block). Called on the connection's serial lane: implementations must be quick
 * and must not throw (a failure is logged and the connection carries on).
 */
public interface IngestObserver {
    /** Records nothing. */
    IngestObserver NONE = new IngestObserver() {
    };

    /** {@code principal} connected from {@code remoteAddress}; {@code agentName} as its HELLO gave it. */
    default void connected(AccessPrincipal principal, String remoteAddress, String agentName) {
    }

    /**
     * A backup of {@code volume} by {@code principal} ended: committed ({@code ok}, {@code detail}
     * says what) or not ({@code detail} is the error); {@code bytes}: payload bytes received in it.
     */
    default void backupEnded(AccessPrincipal principal, String volume, boolean ok, String detail, long bytes) {
    }

    /**
     * The daemon of {@code principal} (HELLO's {@code agentName}) reported how a run ended. Unlike the
     * other events its failure is the agent's answer (the report is not acknowledged), so it may throw.
     */
    default void runReported(AccessPrincipal principal, String agentName, RunReport report) {
    }

    /** {@code bytes} of block payloads received for {@code volume} (one BLOCKS frame). */
    default void received(String volume, long bytes) {
    }

    /** {@code bytes} (logical: blocks × block size) sent in a restore of {@code volume} (one frame). */
    default void restored(String volume, long bytes) {
    }
}
