package org.holdfast.server.store;

import org.rocksdb.WriteBatch;

/**
 * Changes to the catalog database that {@link MetadataDb#write} applies atomically; the type that
 * crosses layers instead of RocksDB's {@code WriteBatch}, so that gc, engine and volumes can add
 * their records to a catalog commit without touching RocksDB.
 *
 * <p>Whoever creates a batch owns it and closes it (try-with-resources): we own the native
 * {@code WriteBatch} inside and release it in {@link #close}. Entries are added through
 * {@link MetadataDb}'s batch methods, which translate native failures once.
 */
public final class MetadataBatch implements AutoCloseable {
    private final WriteBatch batch = new WriteBatch();

    /** The native batch, for {@link MetadataDb} only. */
    WriteBatch rocks() {
        return batch;
    }

    /** Number of puts and deletes added so far. */
    public int count() {
        return batch.count();
    }

    @Override
    public void close() {
        batch.close();
    }
}
