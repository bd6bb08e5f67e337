package org.holdfast.server.store;

/**
 * A catalog read or write refused because the catalog is closing (the server is stopping): nothing
 * happened, nothing changed; it can be retried once the server runs again.
 */
public final class CatalogClosedException extends StoreException {
    public CatalogClosedException(String path, String key) {
        super("metadata-db", path, key, "the catalog is closed or closing (the server is stopping), so this read or write was refused"
                + " and changed nothing; retry once the server has started again", null);
    }
}
