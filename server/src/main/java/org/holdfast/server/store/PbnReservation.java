package org.holdfast.server.store;

import org.holdfast.common.id.PbnRange;

/**
 * PBN reservation of a {@link DataStore}: the next PBN and the synced high-water mark above it
 * (see "PBNs are never reused" there). Not thread-safe: every call is under the store's append lock.
 */
final class PbnReservation {
    private final MetadataDb db;
    private final PbnRange range;
    private final int batch;
    private final String dir;

    // guarded by the store's appendLock
    private long nextPbn;
    private long reservedPbn;

    PbnReservation(MetadataDb db, PbnRange range, int batch, String dir) {
        this.db = db;
        this.range = range;
        this.batch = batch;
        this.dir = dir;
    }

    /**
     * At open: the next PBN is above every one reserved or indexed, so none is handed out twice, and
     * not below the range's first.
     */
    void continueAt(LocationIndex locations) {
        nextPbn = Math.max(Math.max(db.metaLong(FormatVersions.META_PBN_RESERVED, range.first()), locations.maxPbn() + 1), range.first());
        reservedPbn = nextPbn;
    }

    /** The PBN the next append gets. */
    long next() {
        return nextPbn;
    }

    /** Refuses an append of {@code count} PBNs from the next one that would pass the range's limit. */
    void requireRoom(int count) {
        long first = nextPbn;
        if (first > range.limit() - count) {
            throw new PbnRangeFullException(dir, range, first, count);
        }
    }

    /** Makes the synced reservation cover {@code count} PBNs from the next one before any is handed out. */
    void cover(int count) {
        long first = nextPbn;
        if (first + count > reservedPbn) {
            reserve(reservationEnd(first + count));
        }
    }

    /** The PBNs below {@code next} are handed out (or skipped). */
    void handedOutBelow(long next) {
        nextPbn = next;
    }

    /** Skips to {@code pbn} (see {@link DataStore#skipTo}); the caller checked it against the range. */
    void skipTo(long pbn) {
        if (pbn <= nextPbn) {
            return;
        }
        if (pbn > reservedPbn) {
            reserve(pbn);
        }
        nextPbn = pbn;
    }

    /** At an orderly close: hands the PBNs reserved but never given out back (see {@link DataStore#close}). */
    void release() {
        if (nextPbn < reservedPbn) {
            reserve(nextPbn);
        }
    }

    /** A reservation covering PBNs below {@code needed} plus a batch, never past the range's limit. */
    private long reservationEnd(long needed) {
        return needed > range.limit() - batch ? range.limit() : needed + batch;
    }

    private void reserve(long upTo) {
        try (MetadataBatch b = new MetadataBatch()) {
            db.putMetaLong(b, FormatVersions.META_PBN_RESERVED, upTo);
            db.write(b, true);
        }
        reservedPbn = upTo;
    }
}
