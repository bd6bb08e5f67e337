package org.holdfast.server.store;

/** A catalog backup that was asked for by id is not in the backup directory (or the directory holds none). */
public class UnknownCatalogBackupException extends RuntimeException {
    public UnknownCatalogBackupException(String message) {
        super(message);
    }
}
