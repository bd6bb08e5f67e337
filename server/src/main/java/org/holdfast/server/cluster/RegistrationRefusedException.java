package org.holdfast.server.cluster;

/** The master refuses a worker's registration; nothing was registered or changed. The message says what to do. */
public final class RegistrationRefusedException extends RuntimeException {
    /** Why, so the transport can pick its error code. */
    public enum Reason {
        /** The node name is empty or has characters outside {@code [A-Za-z0-9._-]}. */
        INVALID_NODE_NAME,
        /** Another live connection holds this node name (for a replacement: another worker, or the worker itself). */
        NODE_CONFLICT,
        /** The node is bound to another token than the one registering it (a stolen or mixed-up token). */
        TOKEN_MISMATCH,
        /** The token has registered as many node names as {@code holdfast.cluster.max-nodes-per-token} allows. */
        TOO_MANY_NODES,
        /** Every PBN range is taken (the id space of the configured range size is used up). */
        NO_RANGE_LEFT,
        /** The node's range data archives at a takeover epoch below one the master heard for the worker: another node took the range over. */
        TAKEN_OVER,
        /** The node speaks a cluster version that carries no archive epoch (below 5) while the master holds a fence for its worker id. */
        UNFENCED_VERSION,
        /**
         * The node would take its worker id's archived range over while the master heard the old node (or
         * started) less than {@code lost-after} ago: its delete lease may still run; the node retries.
         */
        TAKEOVER_WAIT,
        /**
         * The node's own range data (archive epoch 1 or more) while another node of its worker id takes the
         * range over and has not claimed, been refused or gone silent for {@code lost-after}; the node retries.
         */
        TAKEOVER_IN_PROGRESS,
        /** The node presents a node generation below one its worker id acknowledged: a cloned or restored copy of the range data. */
        OLDER_COPY
    }

    private final Reason reason;

    public RegistrationRefusedException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
