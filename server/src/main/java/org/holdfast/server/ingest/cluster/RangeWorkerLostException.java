package org.holdfast.server.ingest.cluster;

/** A worker's link ended or went silent while a data call on it was pending (or after): the call cannot go on. */
public final class RangeWorkerLostException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RangeWorkerLostException(String message) {
        super(message);
    }
}
