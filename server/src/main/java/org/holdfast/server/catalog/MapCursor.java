package org.holdfast.server.catalog;

import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;

/**
 * Reads one volume's versioned map. Because the sequence is stored inverted, the entries of one LBN
 * sort newest first, so "the newest entry not newer than N" is a single seek to (LBN, ~N).
 *
 * <p>Reuses its key and value buffers: no allocation per entry. Not thread-safe. The caller owns it
 * and closes it (it holds a RocksDB iterator, which also pins a consistent view of the map).
 */
public final class MapCursor implements AutoCloseable {
    private final CheckedIterator it;
    private final long volumeId;
    private final String path;
    private final byte[] seekKey = new byte[CatalogKeys.MAP_KEY_BYTES];
    private final byte[] key = new byte[CatalogKeys.MAP_KEY_BYTES];
    private final byte[] value = new byte[8];
    private long lbn;
    private long birth;
    private long pbn;
    // scan state
    private long scanSequence;
    private long scanEnd;
    private boolean scanStarted;

    MapCursor(CheckedIterator it, long volumeId, String path) {
        this.it = it;
        this.volumeId = volumeId;
        this.path = path;
    }

    /**
     * Positions on the newest entry of {@code lbn} whose birth is at most {@code sequence}; returns
     * false (and PBN 0, birth 0) if there is none, meaning the LBN reads as zero.
     */
    public boolean seekAtOrBefore(long lbn, long sequence) {
        CatalogKeys.mapKey(seekKey, volumeId, lbn, sequence);
        it.seek(seekKey);
        if (load() && this.lbn == lbn) {
            return true;
        }
        this.lbn = lbn;
        this.pbn = 0;
        this.birth = 0;
        return false;
    }

    /** Positions on the newest entry of {@code lbn}, whatever its sequence. */
    public boolean seekNewest(long lbn) {
        return seekAtOrBefore(lbn, Long.MAX_VALUE);
    }

    /**
     * Starts an ordered scan of snapshot {@code sequence}'s mapped LBNs in [fromLbn, endLbn): each
     * {@link #nextMapped()} moves to the next LBN that has an entry not newer than {@code sequence}.
     */
    public void startScan(long sequence, long fromLbn, long endLbn) {
        this.scanSequence = sequence;
        this.scanEnd = endLbn;
        this.scanStarted = false;
        this.lbn = fromLbn;
    }

    /** Advances the scan; false when no mapped LBN is left below the end. PBN may be 0 (zeroed). */
    public boolean nextMapped() {
        if (!scanStarted) {
            scanStarted = true;
            seek(lbn, scanSequence);
        } else {
            // Skip the older versions of the LBN just returned: step once, seek only if still on it.
            long done = lbn;
            it.next();
            if (load() && lbn == done) {
                seek(done + 1, scanSequence);
            }
        }
        while (load() && lbn < scanEnd) {
            if (birth <= scanSequence) {
                return true;
            }
            // Only newer versions here so far: jump to this LBN's newest one not newer than the snapshot.
            long current = lbn;
            seek(current, scanSequence);
            if (!load()) {
                return false;
            }
            if (lbn == current) {
                return lbn < scanEnd;
            }
            // that LBN had nothing old enough; we now stand on the next LBN's newest entry
        }
        return false;
    }

    private void seek(long lbn, long sequence) {
        CatalogKeys.mapKey(seekKey, volumeId, lbn, sequence);
        it.seek(seekKey);
    }

    /** LBN of the current entry. */
    public long lbn() {
        return lbn;
    }

    /** Sequence of the snapshot that wrote the current entry (0 if none). */
    public long birthSequence() {
        return birth;
    }

    /** PBN of the current entry (0: the zero block, or no entry). */
    public long pbn() {
        return pbn;
    }

    /** Loads the iterator's entry into the fields; false if past this volume's entries. */
    private boolean load() {
        if (!it.isValid()) {
            return false;
        }
        int n = it.key(key);
        if (n != CatalogKeys.MAP_KEY_BYTES) {
            throw new CorruptDataException("catalog.map", path, null, "map key of " + n + " bytes");
        }
        if (Bytes.getLong(key, 0) != volumeId) {
            return false;
        }
        if (it.value(value) != 8) {
            throw new CorruptDataException("catalog.map", path, "volume " + volumeId, "map value is not 8 bytes");
        }
        lbn = Bytes.getLong(key, 8);
        birth = ~Bytes.getLong(key, 16);
        pbn = Bytes.getLong(value, 0);
        return true;
    }

    @Override
    public void close() {
        it.close();
    }
}
