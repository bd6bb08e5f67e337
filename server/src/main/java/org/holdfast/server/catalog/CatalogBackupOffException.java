package org.holdfast.server.catalog;

/** A catalog backup was asked for, but no backup directory is set. */
public class CatalogBackupOffException extends RuntimeException {
    public CatalogBackupOffException() {
        super("catalog backups are off: set holdfast.catalog.backup.directory to a directory on another disk"
                + " than the data directory, and restart the server (docs/operations.md, \"Back up the catalog, and recover a lost server\")");
    }
}
