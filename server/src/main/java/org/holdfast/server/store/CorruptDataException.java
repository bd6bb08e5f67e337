package org.holdfast.server.store;

/** Stored data failed a check (bad magic, checksum mismatch, missing record): the reaction is to run fsck. */
public class CorruptDataException extends StoreException {
    public CorruptDataException(String store, String path, String key, String message) {
        super(store, path, key, message, null);
    }

    /** The same with the failure that led to this one. */
    protected CorruptDataException(String store, String path, String key, String message, Throwable cause) {
        super(store, path, key, message, cause);
    }
}
