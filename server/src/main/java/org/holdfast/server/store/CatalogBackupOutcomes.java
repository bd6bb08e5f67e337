package org.holdfast.server.store;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The last verification outcome of each catalog backup: the records beside the backups
 * ({@link CatalogBackupVerdicts}) and the outcomes the backup disk refused to record (full), kept
 * until the server stops so that the next backup still sets their damage aside. Safe for concurrent use.
 */
final class CatalogBackupOutcomes {
    private final Path dir;
    // outcomes whose record the backup disk refused: newer than the record on disk, if any
    private final Map<Integer, CatalogBackups.Verification> unrecorded = new ConcurrentHashMap<>();

    CatalogBackupOutcomes(Path dir) {
        this.dir = dir;
    }

    /** The records on disk, and the outcomes the disk refused to record (those are newer). */
    Map<Integer, CatalogBackups.Verification> all() {
        Map<Integer, CatalogBackups.Verification> all = CatalogBackupVerdicts.read(dir);
        all.putAll(unrecorded);
        return all;
    }

    /** Records {@code v} beside the backups; if the disk refuses, keeps it here and logs why (best effort). */
    void record(CatalogBackups.Verification v) {
        try {
            CatalogBackupVerdicts.write(dir, v);
            unrecorded.remove(v.id());
        } catch (StoreException e) {
            unrecorded.put(v.id(), v); // until the server stops; after a restart the backup job verifies the newest one again
            // the logger of the class operators know the messages by
            System.getLogger(CatalogBackups.class.getName()).log(System.Logger.Level.WARNING,
                    "cannot record the verification of catalog backup " + v.id() + ": " + e.getMessage());
        }
    }

    /** Forgets the outcomes of backups not in {@code ids}, on disk and here (a backup id handed out again starts clean). */
    void retain(Set<Integer> ids) {
        CatalogBackupVerdicts.retain(dir, ids);
        unrecorded.keySet().retainAll(ids);
    }
}
