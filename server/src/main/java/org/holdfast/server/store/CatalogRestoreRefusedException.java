package org.holdfast.server.store;

/**
 * A restored catalog does not fit this data directory (another store's backup, or an archived
 * store's without its object store settings); thrown before the restore writes anything.
 */
public class CatalogRestoreRefusedException extends StoreException {
    public CatalogRestoreRefusedException(String path, String message) {
        super("catalog-restore", path, null, message, null);
    }
}
