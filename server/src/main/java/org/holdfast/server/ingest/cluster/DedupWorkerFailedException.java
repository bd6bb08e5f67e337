package org.holdfast.server.ingest.cluster;

import org.holdfast.server.engine.DedupUnavailableException;

/** A remote dedup worker answered a call with DEDUP_FAILED: its engine failed, the backup making the call cannot go on. */
public final class DedupWorkerFailedException extends DedupUnavailableException {
    private static final long serialVersionUID = 1L;

    public DedupWorkerFailedException(String message) {
        super(message);
    }
}
