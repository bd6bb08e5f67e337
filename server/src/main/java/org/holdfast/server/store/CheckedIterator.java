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
    /** The catalog this iterator is counted in (MetadataDb.iterator), or null. */
    private final MetadataDb owner;
    private boolean closed;

    CheckedIterator(RocksIterator it, String store, String path) {
        this(it, store, path, null);
    }

    CheckedIterator(RocksIterator it, String store, String path, MetadataDb owner) {
        this.it = it;
        this.store = store;
        this.path = path;
        this.owner = owner;
    }

    /** Refuses every step once the catalog's close began, so the holder stops and closes this iterator, which close() awaits. */
    private void live() {
        if (owner != null && owner.isClosed()) {
            throw new CatalogClosedException(path, "iterator");
        }
    }

    public void seek(byte[] key) {
        live();
        it.seek(key);
    }

    /** Positions on the last entry at or before {@code key} (for newest-first scans). */
    public void seekForPrev(byte[] key) {
        live();
        it.seekForPrev(key);
    }

    public void seekToFirst() {
        live();
        it.seekToFirst();
    }

    public void seekToLast() {
        live();
        it.seekToLast();
    }

    public void next() {
        live();
        it.next();
    }

    public void prev() {
        live();
        it.prev();
    }

    /** True if positioned on an entry; false at the end, after checking that the end is real. */
    public boolean isValid() {
        live();
        if (it.isValid()) {
            return true;
        }
        try {
            it.status();
        } catch (RocksDBException e) {
            throw MetadataDb.translate(store, path, "iterator", e); // corruption: corrupt-data naming the file, not "retry"
        }
        return false;
    }

    public byte[] key() {
        live();
        return it.key();
    }

    /** Copies the key into {@code dst}; returns the key's full length. */
    public int key(byte[] dst) {
        live();
        return it.key(dst);
    }

    public byte[] value() {
        live();
        return it.value();
    }

    /** Copies the value into {@code dst}; returns the value's full length. */
    public int value(byte[] dst) {
        live();
        return it.value(dst);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        it.close();
        if (owner != null) {
            owner.iteratorClosed();
        }
    }

    /**
     * Positions this iterator on the u64 key {@code target} of a column keyed by big-endian u64 (PBNs):
     * one step when it sits on {@code at} = target - 1, else a seek. Reads the value into
     * {@code value} and returns its length, or -1 if {@code target} has no entry. {@code key} (8
     * bytes) is scratch.
     */
    public int valueAtLongKey(long target, long at, byte[] key, byte[] value) {
        if (at >= 0 && target == at + 1) {
            next();
        } else {
            Bytes.putLong(key, 0, target);
            seek(key);
        }
        if (!isValid() || key(key) != 8 || Bytes.getLong(key, 0) != target) {
            return -1;
        }
        return value(value);
    }
}
