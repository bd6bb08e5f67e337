package org.holdfast.server.ingest.cluster;

import org.holdfast.server.engine.DedupUnavailableException;

/** A remote dedup worker's link ended or went silent: the call (and the backup making it) cannot go on. */
public final class DedupWorkerLostException extends DedupUnavailableException {
    private static final long serialVersionUID = 1L;

    public DedupWorkerLostException(String message) {
        super(message);
    }
}
