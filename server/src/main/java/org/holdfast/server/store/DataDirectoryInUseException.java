package org.holdfast.server.store;

/** The data directory is locked by another process (a running server or an offline tool): nothing was opened. */
public final class DataDirectoryInUseException extends StoreException {
    private final String lockFile;

    public DataDirectoryInUseException(String root, String lockFile) {
        super("data-dir", root, null, "the data directory is in use by another Holdfast server (lock file " + lockFile
                + "); stop it or choose another holdfast.data-dir", null);
        this.lockFile = lockFile;
    }

    /** The lock file another process holds. */
    public String lockFile() {
        return lockFile;
    }
}
