package org.holdfast.server.store;

import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * A RocksDB iterator that never mistakes an I/O error for the end of the data: whenever it becomes
 * invalid it checks {@code status()} and throws. The caller owns it and closes it.
 */
public final class CheckedIterator implements AutoCloseable {
    private final RocksIterator it;
    private final String store;
    private final String path;

    CheckedIterator(RocksIterator it, String store, String path) {
        this.it = it;
        this.store = store;
        this.path = path;
    }

    public void seek(byte[] key) {
        it.seek(key);
    }

    /** Positions on the last entry at or before {@code key} (for newest-first scans). */
    public void seekForPrev(byte[] key) {
        it.seekForPrev(key);
    }

    public void seekToFirst() {
        it.seekToFirst();
    }

    public void seekToLast() {
        it.seekToLast();
    }

    public void next() {
        it.next();
    }

    public void prev() {
        it.prev();
    }

    /** True if positioned on an entry; false at the end, after checking that the end is real. */
    public boolean isValid() {
        if (it.isValid()) {
            return true;
        }
        try {
            it.status();
        } catch (RocksDBException e) {
            throw StoreException.translate(store, path, "iterator", e);
        }
        return false;
    }

    public byte[] key() {
        return it.key();
    }

    /** Copies the key into {@code dst}; returns the key's full length. */
    public int key(byte[] dst) {
        return it.key(dst);
    }

    public byte[] value() {
        return it.value();
    }

    /** Copies the value into {@code dst}; returns the value's full length. */
    public int value(byte[] dst) {
        return it.value(dst);
    }

    @Override
    public void close() {
        it.close();
    }
}
