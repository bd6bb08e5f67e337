package org.holdfast.server.store;

/**
 * The catalog database stopped taking writes after a background error (a flush, a compaction or a
 * write-ahead-log write failed: a full disk, an I/O error). Reads still work; writes fail until
 * RocksDB recovers (it retries by itself once space is back) or the server restarts.
 */
public final class CatalogStoppedException extends StoreException {
    public CatalogStoppedException(String path, String reason, Throwable cause) {
        super("metadata-db", path, null, "the catalog database stopped taking writes after a background error (" + reason + "); "
                + CatalogHealth.ACTION, cause);
    }
}
