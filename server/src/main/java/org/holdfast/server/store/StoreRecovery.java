package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;

/**
 * Opening a {@link DataStore}: crash recovery at a server's start (truncate to the durable point,
 * drop younger logs, finish an interrupted compaction) or a checker's read-only open.
 */
final class StoreRecovery {
    private static final System.Logger LOG = System.getLogger(DataStore.class.getName());
    private static final String STORE = DataStore.STORE;

    /** The store as opened: its active log and the durable point (0, 0 for a new store until its first sync). */
    record Opened(DataLog active, int durableLogId, long durableLength, DataStore.Recovery recovery) {
    }

    private StoreRecovery() {
    }

    /** A checker's open: nothing on disk changes (see {@link DataStore#openReadOnly(Path, MetadataDb)}). */
    static Opened openReadOnly(Path dir, MetadataDb db, OpenLogs logs, PbnReservation pbns, LocationIndex locations) {
        if (db.metaLong(Compactor.META_INTENT, -1) >= 0) {
            throw new StoreException(STORE, dir.toString(), Compactor.META_INTENT, "a compaction was interrupted and is completed"
                    + " only when a server opens the store; start the server once, stop it, then check again", null);
        }
        DurablePoint dp = DurablePoint.read(db, STORE);
        if (dp == null) {
            throw new CorruptDataException(STORE, db.path(), FormatVersions.META_DURABLE_POINT, "the catalog has no durable point");
        }
        DataLog active = dp.openLog(dir, dir.resolve(DataLog.fileName(dp.logId())), true, STORE);
        logs.put(active);
        pbns.continueAt(locations);
        return new Opened(active, dp.logId(), dp.length(), new DataStore.Recovery(dp.logId(), dp.length(), 0, 0));
    }

    /** A server's open: creates the store, or recovers it to its durable point (see the {@link DataStore} class comment). */
    static Opened recover(Path dir, MetadataDb db, PbnRange range, OpenLogs logs, PbnReservation pbns, LocationIndex locations) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
        if (DurablePoint.read(db, STORE) != null || db.metaLong(FormatVersions.META_PBN_RESERVED, -1) >= 0) {
            StoreRange.requireSame(db, range, dir.toString()); // an existing store: before anything on disk changes
        }
        Compactor.finishInterrupted(dir, db); // a crash may have left a compaction half done
        TreeMap<Integer, Path> files = logFiles(dir);
        DurablePoint dp = DurablePoint.read(db, STORE);
        DataLog active;
        int durableLogId = 0;
        long durableLength = 0;
        long dropped = 0;
        int deleted = 0;
        if (dp == null) {
            if (!files.isEmpty()) {
                throw new CorruptDataException(STORE, dir.toString(), FormatVersions.META_DURABLE_POINT,
                        "data logs exist but the catalog has no durable point: the catalog (<data-dir>/catalog) was deleted, lost"
                                + " or replaced by an empty one; refusing to drop the data logs. If holdfast.data-dir is the right"
                                + " directory, " + MetadataDb.REPAIR_HINT);
            }
            active = DataLog.create(dir, 1, System.currentTimeMillis());
            logs.put(active);
            try (MetadataBatch b = new MetadataBatch()) {
                StoreRange.record(db, b, range); // in the batch that creates the store: no store without its range
                new DurablePoint(1, DATA_LOG_HEADER_BYTES).write(db, b);
            }
        } else {
            int id = dp.logId();
            long len = dp.length();
            for (Map.Entry<Integer, Path> e : files.tailMap(id, false).entrySet()) {
                // Younger than the durable point: nothing in it was ever indexed or referenced.
                LOG.log(Level.WARNING, "dropping data log {0}: it lies beyond the durable point", e.getValue());
                DataLog.deleteFile(e.getValue());
                deleted++;
            }
            Path activePath = files.get(id);
            active = dp.openLog(dir, activePath, false, STORE);
            if (active.size() > len) {
                dropped = active.size() - len;
                LOG.log(Level.WARNING, "truncating {0} from {1} to the durable point {2}", activePath, active.size(), len);
                active.truncate(len);
            }
            logs.put(active);
            durableLogId = id;
            durableLength = len;
        }
        pbns.continueAt(locations);
        return new Opened(active, durableLogId, durableLength, new DataStore.Recovery(active.id(), active.size(), dropped, deleted));
    }

    /** The data log files in {@code dir} by id (what recovery and a catalog restore find on disk). */
    static TreeMap<Integer, Path> logFiles(Path dir) {
        TreeMap<Integer, Path> files = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return files;
        }
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(p -> {
                int id = DataLog.parseId(p.getFileName().toString());
                if (id >= 0) {
                    files.put(id, p);
                }
            });
        } catch (IOException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
        return files;
    }

    /**
     * At a server's open with backend s3: the sealed local logs (ids below {@code below}) whose upload is
     * confirmed (cache entries from the start), oldest first by modification time.
     */
    static Map<Integer, Long> uploadedLocalLogs(Path dir, int below, LogArchive archive) {
        record Local(int id, long size, long modified) {
        }
        java.util.List<Local> found = new java.util.ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                int id = DataLog.parseId(p.getFileName().toString());
                if (id >= 0 && id < below && archive.isUploaded(id)) {
                    found.add(new Local(id, Files.size(p), Files.getLastModifiedTime(p).toMillis()));
                }
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
        found.sort(java.util.Comparator.comparingLong(Local::modified).thenComparingInt(Local::id));
        Map<Integer, Long> out = new java.util.LinkedHashMap<>();
        for (Local l : found) {
            out.put(l.id(), l.size());
        }
        return out;
    }
}
