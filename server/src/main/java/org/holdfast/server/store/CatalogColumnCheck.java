package org.holdfast.server.store;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * Refuses a catalog that holds column families this release does not know: a newer release wrote
 * it (a downgrade). RocksDB would refuse it too, but only as "Column families not opened: X", which
 * tells an operator neither what happened nor what to do.
 */
final class CatalogColumnCheck {
    private static final String STORE = "metadata-db";

    private CatalogColumnCheck() {
    }

    /** Throws if the catalog in {@code dir} (if any) has a column family outside {@code known}; reads only. */
    static void refuseUnknown(Path dir, List<String> known) {
        if (!Files.exists(dir.resolve("CURRENT"))) {
            return; // a new catalog, created by the open that follows
        }
        List<String> unknown = new ArrayList<>();
        try (Options options = new Options()) {
            for (byte[] name : RocksDB.listColumnFamilies(options, dir.toString())) {
                String s = new String(name, StandardCharsets.UTF_8);
                if (!s.equals("default") && !known.contains(s)) {
                    unknown.add(s);
                }
            }
        } catch (RocksDBException e) {
            return; // unreadable here: the open that follows reports it with RocksDB's own reason
        }
        if (!unknown.isEmpty()) {
            throw new StoreException(STORE, dir.toString(), null, "the catalog holds column families this release does not know "
                    + unknown + ": a newer Holdfast release wrote this data directory, and this release cannot use it."
                    + " Start the newer release again, or roll back by restoring the copy of the data directory taken before"
                    + " the upgrade (docs/operations.md, \"Upgrading\"); nothing was changed", null);
        }
    }
}
