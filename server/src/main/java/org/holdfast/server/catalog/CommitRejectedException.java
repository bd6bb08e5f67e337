package org.holdfast.server.catalog;

/** A snapshot commit was refused before anything was written (wrong parent, block size, bad entries). */
public class CommitRejectedException extends RuntimeException {
    /** Why the commit was refused; the ingest maps each to a protocol error code. */
    public enum Reason { PARENT_MOVED, BLOCK_SIZE_MISMATCH, BAD_ENTRIES }

    private final Reason reason;

    public CommitRejectedException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
