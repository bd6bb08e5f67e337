package org.holdfast.server.store;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * One meta value read from a catalog opened read-only: takes no lock and writes nothing, so it never
 * conflicts with the process that opens the catalog read-write (the worker's data lane opening its
 * range store while REGISTER asks for the archive epoch).
 */
public final class CatalogPeek {
    static {
        RocksDB.loadLibrary();
    }

    private CatalogPeek() {
    }

    /** The epoch the catalog in {@code dir} records for its range store, or 0 if none (see {@link RangeTakeover#recordedEpoch}). */
    public static long recordedEpoch(Path dir) {
        return metaLong(dir, RangeTakeover.META_EPOCH, 0);
    }

    /** The u64 meta value {@code key} of the catalog in {@code dir}, or {@code dflt} if absent. */
    static long metaLong(Path dir, String key, long dflt) {
        // read-only opens may name a subset of the column families: the default one and meta suffice
        List<ColumnFamilyDescriptor> descriptors = List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY),
                new ColumnFamilyDescriptor(MetadataDb.bytes(MetadataDb.Column.META.cfName())));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (DBOptions options = new DBOptions();
             RocksDB db = RocksDB.openReadOnly(options, dir.toString(), descriptors, handles)) {
            try {
                return MetaLong.decode(db.get(handles.get(1), MetadataDb.bytes(key)), dir.toString(), key, dflt);
            } finally {
                handles.forEach(ColumnFamilyHandle::close);
            }
        } catch (RocksDBException e) {
            throw MetadataDb.translate("metadata-db", dir.toString(), key, e);
        }
    }
}
