package org.holdfast.server.catalog;

/** The volume exists but has no snapshot with that sequence. */
public class UnknownSnapshotException extends RuntimeException {
    public UnknownSnapshotException(String volume, long sequence) {
        super("volume '" + volume + "' has no snapshot " + sequence);
    }
}
