package org.holdfast.server.store;

/** The disk is (nearly) full: the write was refused before anything committed changed. */
public class StorageFullException extends StoreException {
    private final long freeBytes;
    private final long reserveBytes;

    public StorageFullException(String store, String path, String key, String message, Throwable cause) {
        this(store, path, key, message, cause, -1, -1);
    }

    /** With the free space seen and the reserve, when known (-1 otherwise). */
    public StorageFullException(String store, String path, String key, String message, Throwable cause, long freeBytes, long reserveBytes) {
        super(store, path, key, message, cause);
        this.freeBytes = freeBytes;
        this.reserveBytes = reserveBytes;
    }

    /** Free bytes on the data disk when the write was refused, or -1 if unknown (an ENOSPC). */
    public long freeBytes() {
        return freeBytes;
    }

    /** The configured reserve, or -1 if unknown. */
    public long reserveBytes() {
        return reserveBytes;
    }

    /** The message without the store/path prefix, for agents and problem details. */
    public String advice() {
        String m = getMessage();
        int i = m.indexOf("storage full: ");
        return i >= 0 ? m.substring(i) : "storage full: no space left on the data disk; run reclaim-now (POST /api/v1/gc/reclaim),"
                + " which frees what failed backups left, after deleting snapshots or volumes you no longer need; or grow the disk";
    }
}
