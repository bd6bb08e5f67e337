package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntSupplier;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.kill.KillPoints;

/**
 * The writers of a {@link DataStore}'s exclusive relocation lock: a compaction's switch of a sealed
 * log to its compacted file, the drop of a dead log, and the cache's eviction of an uploaded log's
 * local file (see "Relocation (online compaction)" in the store's class comment). The caller has
 * refused a read-only store; the locks are the store's.
 */
final class LogRelocation {
    private final Path dir;
    private final MetadataDb db;
    private final LocationIndex locations;
    private final OpenLogs logs;
    private final BlockReads reads;
    /** Backend s3: the archive whose cache and upload records a switch updates; null for a local store. */
    private final LogArchive archive;
    private final ReentrantReadWriteLock relocation;
    /** The store's {@link DataStore#compactableBelow()} (under its sync lock). */
    private final IntSupplier compactableBelow;

    LogRelocation(Path dir, MetadataDb db, LocationIndex locations, OpenLogs logs, BlockReads reads, LogArchive archive,
            ReentrantReadWriteLock relocation, IntSupplier compactableBelow) {
        this.dir = dir;
        this.db = db;
        this.locations = locations;
        this.logs = logs;
        this.reads = reads;
        this.archive = archive;
        this.relocation = relocation;
        this.compactableBelow = compactableBelow;
    }

    /**
     * Step 2 and 3 of a compaction of sealed log {@code logId} (see {@link DataStore#relocate(int, Path, LiveRecords)});
     * with an archive, {@code objectEpoch} is the compacted copy's (already uploaded), else -1.
     */
    int relocate(int logId, Path compacted, LiveRecords records, long objectEpoch) {
        Path target = logs.path(logId);
        int moved = 0;
        LogCache cache = archive == null ? null : archive.cache();
        relocation.writeLock().lock();
        try {
            logs.ensureOpen();
            if (logId >= compactableBelow.getAsInt()) {
                throw new IllegalStateException("log " + logId + " is not sealed and indexed; it cannot be compacted");
            }
            boolean[] still = locations.stillAt(records, logId);
            if (cache != null) {
                cache.beginRelocation(logId); // no range of the old object may outlive the switch, nor a crash in it
            }
            java.util.function.Consumer<MetadataBatch> undoUpload;
            try (MetadataBatch batch = new MetadataBatch()) {
                for (int i = 0; i < records.size(); i++) {
                    if (still[i]) {
                        locations.put(batch, records.pbn(i), logId, records.newOffset(i), records.newLength(i), records.fps(), i * Fingerprint.BYTES);
                        moved++;
                    }
                }
                db.putMetaLong(batch, Compactor.META_INTENT, logId);
                undoUpload = objectEpoch >= 0 ? archive.switchUpload(batch, logId, objectEpoch) : null;
                db.write(batch, true);
            }
            try {
                // the old channel stays valid on its (now unlinked) file until closed below
                Compactor.move(compacted, target);
            } catch (RuntimeException e) {
                // the old file is still in place: point the locations back at it before any reader looks
                try (MetadataBatch undo = new MetadataBatch()) {
                    for (int i = 0; i < records.size(); i++) {
                        if (still[i]) {
                            locations.put(undo, records.pbn(i), logId, records.offset(i), records.length(i), records.fps(), i * Fingerprint.BYTES);
                        }
                    }
                    db.delete(undo, db.handle(MetadataDb.Column.META), MetadataDb.bytes(Compactor.META_INTENT));
                    if (undoUpload != null) {
                        undoUpload.accept(undo);
                    }
                    db.write(undo, true);
                }
                throw e;
            }
            DataLog.forceDirectory(dir);
            reads.newEpoch(); // offsets in this log now name the compacted file's records
            logs.closeQuietly(logId); // readers reopen the log, now the compacted file
        } finally {
            if (cache != null) {
                // only a confirmed upload's local file is cache: anything else is the only copy
                cache.endRelocation(logId, archive.isUploaded(logId) ? localSize(target) : 0);
            }
            relocation.writeLock().unlock();
        }
        KillPoints.hit(KillPoints.COMPACTION_AFTER_SWITCH);
        Compactor.clearIntent(db);
        return moved;
    }

    /** The size of local file {@code p}, 0 if it is gone. */
    private static long localSize(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return 0;
        }
    }

    /** Deletes sealed log {@code logId}, which no location names any more (compaction found it dead). */
    void dropLog(int logId) {
        relocation.writeLock().lock();
        try {
            logs.ensureOpen();
            if (logId >= compactableBelow.getAsInt()) {
                throw new IllegalStateException("log " + logId + " is not sealed and indexed; it cannot be dropped");
            }
            logs.closeQuietly(logId);
            if (archive != null) {
                archive.cache().forgetLog(logId);
            }
            DataLog.deleteFile(logs.path(logId));
            DataLog.forceDirectory(dir);
            reads.newEpoch();
        } finally {
            relocation.writeLock().unlock();
        }
    }

    /**
     * Cuts sealed log {@code logId} to {@code length}, the end of its last live record: every record
     * after it is freed, and a freed block never gets a location again, so no reader can need those
     * bytes. Under the exclusive relocation lock, so no read that looked a location up is in flight.
     * A crash leaves the file cut or not, both valid. Not with an archive (the object would differ).
     */
    void trimLog(int logId, long length) {
        relocation.writeLock().lock();
        try {
            logs.ensureOpen();
            if (logId >= compactableBelow.getAsInt() || archive != null) {
                throw new IllegalStateException("log " + logId + " is not a sealed local log; it cannot be trimmed");
            }
            logs.closeQuietly(logId); // readers reopen it
            DataLog.truncateFile(logs.path(logId), length);
        } finally {
            relocation.writeLock().unlock();
        }
    }

    /**
     * Closes and deletes sealed log {@code id}'s local file, which the cache evicts: its upload is
     * confirmed, so later reads go to its object. Takes the relocation lock exclusively, so no read
     * of the file is in flight. False if the log must stay (active, not confirmed, or the store closed).
     */
    boolean evictLocal(int id) {
        relocation.writeLock().lock();
        try {
            if (logs.isClosed() || id >= compactableBelow.getAsInt() || !archive.isUploaded(id)) {
                return false;
            }
            logs.closeQuietly(id);
            DataLog.deleteFile(logs.path(id));
            return true;
        } finally {
            relocation.writeLock().unlock();
        }
    }
}
