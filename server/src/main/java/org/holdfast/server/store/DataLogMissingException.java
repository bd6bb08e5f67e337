package org.holdfast.server.store;

/**
 * A data log exists nowhere the store can read it: its local file is gone and its object is gone
 * from the object store (or its upload was never confirmed). Every block it held is lost, not just
 * the one a read asked for, so the read marks them all ({@link MissingLogSweep}).
 */
final class DataLogMissingException extends CorruptDataException {
    private final int logId;

    DataLogMissingException(String store, String path, int logId, String message) {
        super(store, path, null, message);
        this.logId = logId;
    }

    /** The id of the missing log. */
    int logId() {
        return logId;
    }
}
