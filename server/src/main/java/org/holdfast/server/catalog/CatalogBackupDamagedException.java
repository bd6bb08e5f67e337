package org.holdfast.server.catalog;

/** A catalog backup failed its verification: one of its files is missing, has another size, or fails its checksum. */
public class CatalogBackupDamagedException extends RuntimeException {
    public CatalogBackupDamagedException(String message) {
        super(message);
    }
}
