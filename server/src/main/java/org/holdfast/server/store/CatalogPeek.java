package org.holdfast.server.store;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

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

    /** One key and value read from a column family. */
    public record Entry(byte[] key, byte[] value) {
    }

    /**
     * Every entry of {@code column} in the catalog in {@code dir} (read-only; an empty list if the catalog
     * has no such column family), at most {@code limit} of them: for catalog-restore, which reads the
     * {@code volumes} and {@code volume-settings} of the catalog it moved aside.
     *
     * @throws StoreException if the catalog cannot be opened or read (a damaged one), or holds more than {@code limit}
     */
    public static List<Entry> entries(Path dir, MetadataDb.Column column, int limit) {
        try (Options listing = new Options()) {
            byte[] name = MetadataDb.bytes(column.cfName());
            if (RocksDB.listColumnFamilies(listing, dir.toString()).stream().noneMatch(n -> Arrays.equals(n, name))) {
                return List.of();
            }
            List<ColumnFamilyDescriptor> descriptors = List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY),
                    new ColumnFamilyDescriptor(name));
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            try (DBOptions options = new DBOptions();
                 RocksDB db = RocksDB.openReadOnly(options, dir.toString(), descriptors, handles)) {
                try (RocksIterator it = db.newIterator(handles.get(1))) {
                    List<Entry> out = new ArrayList<>();
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        if (out.size() == limit) {
                            throw new StoreException("metadata-db", dir.toString(), column.cfName(), "more than " + limit + " entries", null);
                        }
                        out.add(new Entry(it.key(), it.value()));
                    }
                    it.status();
                    return out;
                } finally {
                    handles.forEach(ColumnFamilyHandle::close);
                }
            }
        } catch (RocksDBException e) {
            throw MetadataDb.translate("metadata-db", dir.toString(), column.cfName(), e);
        }
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
