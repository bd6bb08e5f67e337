package org.holdfast.server.store;

/** The disk is (nearly) full: the write was refused before anything committed changed. */
public class StorageFullException extends StoreException {
    public StorageFullException(String store, String path, String key, String message, Throwable cause) {
        super(store, path, key, message, cause);
    }
}
