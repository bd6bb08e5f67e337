package org.holdfast.server.store;

/**
 * The catalog database stopped taking writes after a background error (a flush, a compaction or a
 * write-ahead-log write failed: a full disk, an I/O error). Reads still work; writes fail until
 * the server restarts (or RocksDB recovers by itself from a failed flush or compaction).
 */
public final class CatalogStoppedException extends StoreException {
    public CatalogStoppedException(String path, String reason, Throwable cause) {
        super("metadata-db", path, null, "the catalog database stopped taking writes after a background error (" + reason + "); "
                + CatalogHealth.ACTION, cause);
    }
}
