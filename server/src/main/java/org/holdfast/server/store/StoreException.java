package org.holdfast.server.store;

/**
 * A storage operation failed for a reason worth retrying later (I/O error, database unavailable).
 * Names the store, the path and the key so that an operator can find what broke.
 */
public class StoreException extends RuntimeException {
    private final String store;
    private final String path;
    private final String key;

    public StoreException(String store, String path, String key, String message, Throwable cause) {
        super(store + " [" + path + "]" + (key == null ? "" : " key " + key) + ": " + message, cause);
        this.store = store;
        this.path = path;
        this.key = key;
    }

    public String store() {
        return store;
    }

    public String path() {
        return path;
    }

    public String key() {
        return key;
    }

    /** Translates an I/O or RocksDB failure once, recognising a full disk. */
    public static StoreException translate(String store, String path, String key, Exception e) {
        if (isNoSpace(e)) {
            return new StorageFullException(store, path, key, "no space left on device", e);
        }
        return new StoreException(store, path, key, String.valueOf(e.getMessage()), e);
    }

    /** True if {@code e} or a cause says the disk is full (ENOSPC, RocksDB's NoSpace). */
    public static boolean isNoSpace(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && (m.contains("No space left") || m.contains("NoSpace") || m.contains("ENOSPC"))) {
                return true;
            }
        }
        return false;
    }
}
