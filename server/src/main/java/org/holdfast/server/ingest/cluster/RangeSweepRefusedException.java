package org.holdfast.server.ingest.cluster;

import org.holdfast.common.protocol.GcSweepFailed;

/** A worker answered GC_SWEEP with GC_SWEEP_FAILED: busy (a sweep runs), refused (nothing open) or failed part way; {@link #reason()} says which. */
public final class RangeSweepRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int reason;

    public RangeSweepRefusedException(int reason, String message) {
        super(message);
        this.reason = reason;
    }

    /** {@link GcSweepFailed#BUSY}, {@link GcSweepFailed#REFUSED} or {@link GcSweepFailed#FAILED}. */
    public int reason() {
        return reason;
    }
}
