package org.holdfast.server.store;

import org.holdfast.common.id.PbnRange;

/**
 * The PBN range a data store was created for, kept in the meta column family
 * ({@link FormatVersions#META_PBN_RANGE}, 16 bytes: u64 first, u64 limit) so that a store is
 * never reopened over another range. A standalone store keeps no key (its catalog stays as
 * before ranges existed): no key means {@link PbnRange#STANDALONE}.
 */
final class StoreRange {
    private static final String STORE = "data-store";
    private static final int BYTES = 16;

    private StoreRange() {
    }

    /** The range recorded in {@code db}: the key's, else standalone. */
    static PbnRange stored(MetadataDb db) {
        byte[] v = db.get(db.handle(MetadataDb.Column.META), MetadataDb.bytes(FormatVersions.META_PBN_RANGE));
        if (v == null) {
            return PbnRange.STANDALONE;
        }
        if (v.length != BYTES) {
            throw new CorruptDataException(STORE, db.path(), FormatVersions.META_PBN_RANGE, "PBN range has " + v.length
                    + " bytes, expected " + BYTES);
        }
        try {
            return new PbnRange(Bytes.getLong(v, 0), Bytes.getLong(v, 8));
        } catch (IllegalArgumentException e) {
            throw new CorruptDataException(STORE, db.path(), FormatVersions.META_PBN_RANGE, e.getMessage());
        }
    }

    /**
     * Refuses to open the store of {@code dir} over {@code wanted} when the catalog records another
     * range: the directory belongs to another worker (or to a standalone server), and appending
     * there would hand out PBNs that are not this store's.
     */
    static void requireSame(MetadataDb db, PbnRange wanted, String dir) {
        PbnRange stored = stored(db);
        if (!stored.equals(wanted)) {
            throw new IllegalStateException("the data store in " + dir + " was created for PBN range " + describe(stored)
                    + ", not " + describe(wanted) + ": it is another node's data directory (or this node's range changed);"
                    + " point holdfast.data-dir at this node's own directory, or give the node back the range " + stored);
        }
    }

    /** Adds the range to a new store's first batch; nothing for the standalone range (no key). */
    static void record(MetadataDb db, MetadataBatch batch, PbnRange range) {
        if (range.equals(PbnRange.STANDALONE)) {
            return;
        }
        byte[] v = new byte[BYTES];
        Bytes.putLong(v, 0, range.first());
        Bytes.putLong(v, 8, range.limit());
        db.put(batch, db.handle(MetadataDb.Column.META), MetadataDb.bytes(FormatVersions.META_PBN_RANGE), v);
    }

    /** Refuses a PBN outside {@code range}, the range of the store in {@code dir}, before anything is read or changed. */
    static void requireIn(PbnRange range, long pbn, String what, java.nio.file.Path dir) {
        if (!range.contains(pbn)) {
            throw new IllegalArgumentException("cannot " + what + " PBN " + pbn + ": it lies outside the PBN range " + range
                    + " of the data store in " + dir + (pbn <= 0 ? " (PBN 0 is no block)" : " (another node's block?)")
                    + "; nothing was changed");
        }
    }

    static String describe(PbnRange range) {
        return range.equals(PbnRange.STANDALONE) ? "standalone " + range : range.toString();
    }
}
