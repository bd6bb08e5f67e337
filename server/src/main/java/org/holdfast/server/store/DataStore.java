package org.holdfast.server.store;

import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntConsumer;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.kill.KillPoints;

/**
 * The store of unique blocks: appends records to data logs, hands out PBNs, and makes both durable
 * together.
 *
 * <h2>Durability protocol</h2>
 * An append writes the record to the active log (page cache only) and keeps its location in memory
 * ("pending"). {@link #sync()} forces the log, then writes the pending locations and the new
 * <em>durable point</em> (log id, length) to the metadata database in one synced batch. So a
 * location in the index always names a record that is on disk, and everything past the durable
 * point is unindexed. Recovery at {@link #open} truncates the active log to the durable point and
 * deletes younger logs: torn tails and records beyond the last durable point are dropped. Callers
 * (the snapshot commit, the fingerprint index) may rely on a PBN only after a {@code sync()} that
 * followed its append.
 *
 * <h2>PBNs are never reused</h2>
 * PBNs are reserved in batches: before handing out PBN p the high-water mark in the meta column
 * family is synced above p, and a reopened store continues at the high-water mark. PBNs of dropped
 * records are therefore skipped, never handed out twice.
 *
 * <h2>PBN range</h2>
 * A store hands out PBNs of one {@link PbnRange} only ({@link Settings#range()}): a worker's in
 * master/worker mode, {@link PbnRange#STANDALONE} otherwise. The first PBN is the range's first; an
 * append past its limit is refused ({@link PbnRangeFullException}). A range other than standalone
 * is recorded in the catalog when the store is created ({@link StoreRange}) and a reopen over
 * another range is refused, as is any read, repair or forget of a PBN outside the range.
 *
 * <h2>Relocation (online compaction)</h2>
 * A sealed log's records may move while the store serves ({@link Compactor}). Readers hold the
 * shared side of {@code relocation} from the location lookup to the end of the file read; a
 * relocation takes the exclusive side only to switch the locations and the file
 * ({@link #relocate}), so a reader sees either the old locations and the old file or the new ones
 * and the new file. Deleting locations ({@link #forget}) also takes the shared side, which makes
 * a relocation's "is this location still the one I copied?" check atomic with its write.
 *
 * <p>Thread-safe: appends are serialised (PBN order equals log order), reads run in parallel.
 * Lock order: relocation, syncLock, appendLock.
 *
 * <h2>Parts</h2>
 * This class is the façade: it opens and closes the store, forgets freed blocks, and owns the locks;
 * its parts use them: {@link StoreRecovery} (opening), {@link PbnReservation} (under appendLock),
 * {@link OpenLogs} (the logs by id, the closed and read-only flags), {@link ActiveLog} (the append
 * path: blocks, frames, repair copies, rolls), {@link StoreSync} (the sync and the durable point),
 * {@link BlockRepair} (bad blocks repaired in place, switched by the sync), {@link BlockReads} (the
 * read path and its checks), {@link LogRelocation} (the exclusive side of relocation: compaction's
 * switch, dropped and evicted logs).
 */
public final class DataStore implements AutoCloseable {
    static final String STORE = "data-store";
    /** Free space above the reserve a new backup needs to start (one write buffer). */
    static final long BEGIN_HEADROOM = DataLog.WRITE_BUFFER_BYTES;

    /** Settings of the data store. */
    public record Settings(Path dir, long rollBytes, FsyncPolicy fsync, int pbnReserveBatch, long minFreeBytes, PbnRange range) {
        public Settings {
            if (range == null) {
                throw new IllegalArgumentException("a data store needs a PBN range (PbnRange.STANDALONE for a standalone server)");
            }
            if (rollBytes < 1L << 16) {
                throw new IllegalArgumentException("data log roll size must be at least 64 KiB, got " + rollBytes);
            }
            if (pbnReserveBatch < 1) {
                throw new IllegalArgumentException("pbnReserveBatch must be positive");
            }
            if (minFreeBytes < 0) {
                throw new IllegalArgumentException("minFreeBytes must not be negative");
            }
        }

        /** A standalone store's settings (range {@link PbnRange#STANDALONE}). */
        public Settings(Path dir, long rollBytes, FsyncPolicy fsync, int pbnReserveBatch, long minFreeBytes) {
            this(dir, rollBytes, fsync, pbnReserveBatch, minFreeBytes, PbnRange.STANDALONE);
        }

        /** 256 MiB logs, fsync on commit, 64 Ki PBNs per reservation, 256 MiB kept free, standalone. */
        public static Settings defaults(Path dir) {
            return new Settings(dir, 256L << 20, FsyncPolicy.COMMIT, 1 << 16, 256L << 20);
        }

        /** These settings over {@code r}. */
        public Settings withRange(PbnRange r) {
            return new Settings(dir, rollBytes, fsync, pbnReserveBatch, minFreeBytes, r);
        }
    }

    /** What recovery did at open. */
    public record Recovery(int durableLogId, long durableLength, long droppedTailBytes, int deletedLogs) {
    }

    /** Counters for metrics. */
    public record Stats(long nextPbn, long appendedBlocks, long appendedBytes, long syncs, int activeLogId) {
    }

    private final Settings settings;
    private final PbnRange range;
    private final SpaceReserve reserve;
    private final MetadataDb db;
    private final LocationIndex locations;
    private final PossessionIndex possession;
    private final BadBlocks badBlocks;
    private final MissingLogSweep missingLogs;
    private final Recovery recovery;
    private final OpenLogs logs;
    private final BlockReads reads;
    private final LogRelocation relocations;
    private final ActiveLog active;
    private final BlockRepair repair;
    private final StoreSync storeSync;
    private final Object appendLock = new Object();
    private final Object syncLock = new Object();
    private final ReentrantReadWriteLock relocation = new ReentrantReadWriteLock();
    /** Serialises compactions of this store (one intent key, one log at a time). */
    final Object compactionLock = new Object();
    // guarded by appendLock
    private final PbnReservation pbnReservation;
    // locations of appends since the last sync (the active log's, BlockReads' and the sync's)
    private final UnindexedLocations pending = new UnindexedLocations(1024, true);
    /** Opened by a checker: nothing on disk is written, moved or deleted (see {@link #openReadOnly}). */
    private final boolean readOnly;
    /** Backend s3: sealed logs are uploaded and fetched back when their file is gone; null for a local store. */
    private final LogArchive archive;

    private DataStore(Settings settings, MetadataDb db, DiskSpace disk, boolean readOnly) {
        this(settings, db, disk, readOnly, null);
    }

    private DataStore(Settings settings, MetadataDb db, DiskSpace disk, boolean readOnly, LogArchive archive) {
        // a checker opens whatever range the store was created for; a server must name its own
        this.settings = readOnly ? settings.withRange(StoreRange.stored(db)) : settings;
        this.range = this.settings.range();
        this.archive = archive;
        if (archive != null) {
            archive.bind(settings.dir(), db, readOnly);
        }
        this.reserve = new SpaceReserve(disk, settings.minFreeBytes(), settings.dir().toString());
        this.db = db;
        this.readOnly = readOnly;
        this.locations = new LocationIndex(db);
        this.possession = new PossessionIndex(db);
        this.badBlocks = new BadBlocks(db);
        this.missingLogs = new MissingLogSweep(locations, badBlocks, settings.dir());
        this.logs = new OpenLogs(this.settings.dir(), readOnly);
        this.pbnReservation = new PbnReservation(db, range, this.settings.pbnReserveBatch(), this.settings.dir().toString());
        this.reads = new BlockReads(this.settings.dir(), range, db, locations, badBlocks, missingLogs, logs, archive, relocation, appendLock, pending);
        StoreRecovery.Opened opened = readOnly ? StoreRecovery.openReadOnly(this.settings.dir(), db, logs, pbnReservation, locations)
                : StoreRecovery.recover(this.settings.dir(), db, range, logs, pbnReservation, locations);
        this.active = new ActiveLog(this.settings, opened.active(), reserve, logs, pbnReservation, appendLock, pending);
        this.repair = new BlockRepair(this.settings.dir(), range, locations, badBlocks, logs, reads, active, appendLock);
        this.storeSync = new StoreSync(db, locations, logs, active, repair, this.settings.fsync(), archive, relocation, syncLock, appendLock,
                pending, opened.durableLogId(), opened.durableLength());
        // after StoreSync, whose durable point it asks for: the bound reference cannot reach a sync not yet made
        this.relocations = new LogRelocation(this.settings.dir(), db, locations, logs, reads, archive, relocation, storeSync::compactableBelow);
        this.recovery = opened.recovery();
        reserve.unwritten(active::buffered); // read without the append lock: a byte more or less is no harm
        if (archive != null && !readOnly) {
            archive.cache().attach(StoreRecovery.uploadedLocalLogs(settings.dir(), compactableBelow(), archive), relocations::evictLocal);
            archive.sealedBelow(opened.durableLogId()); // uploads a crash interrupted resume now
        }
    }

    /**
     * Opens the store as {@link #open(Settings, MetadataDb, DiskSpace)} with backend s3: sealed logs
     * go to {@code archive} (which the caller closes after the store) and come back from it when
     * their local file is missing.
     */
    public static DataStore open(Settings settings, MetadataDb db, DiskSpace disk, LogArchive archive) {
        return new DataStore(settings, db, disk, false, archive);
    }

    /** As {@link #open(Settings, MetadataDb, DiskSpace, LogArchive)} on the data directory's real disk. */
    public static DataStore open(Settings settings, MetadataDb db, LogArchive archive) {
        return new DataStore(settings, db, DiskSpace.of(settings.dir()), false, archive);
    }

    /**
     * A read-ahead for a restore that is about to read many blocks (backend s3 with read-ahead on),
     * or null: the caller plans the PBNs it will need and closes it.
     */
    public ReadAhead readAhead() {
        return archive == null || readOnly || !archive.cache().settings().readAhead() ? null : new ReadAhead(this, archive.cache());
    }

    /** Whether log {@code id} is read from a local file (open, or on disk), not from its object. */
    boolean isLocal(int id) {
        return logs.isLocal(id);
    }

    /** The object-store archive of sealed logs, or null for a local store. */
    public LogArchive archive() {
        return archive;
    }

    /** Opens the store in {@code settings.dir()}, running crash recovery first. */
    public static DataStore open(Settings settings, MetadataDb db) {
        return new DataStore(settings, db, DiskSpace.of(settings.dir()), false);
    }

    /**
     * Opens the store of a stopped server for a checker: the logs are opened read-only, nothing is
     * recovered on disk (a torn tail past the durable point stays; reads never go past it, since
     * every location lies below it), and every write (append, sync, compaction, forget) is refused.
     * {@code db} may be a scratch copy of the catalog. Refused while an interrupted compaction
     * awaits its completion, which only a server start does.
     */
    public static DataStore openReadOnly(Path dir, MetadataDb db) {
        // the range is the one the catalog records (see the constructor)
        return new DataStore(Settings.defaults(dir), db, DiskSpace.of(dir), true);
    }

    /**
     * As {@link #openReadOnly(Path, MetadataDb)} with backend s3: a log missing in {@code dir} is
     * fetched from {@code archive} into {@code dir} (give the checker a scratch directory, not the
     * data directory); nothing is uploaded.
     */
    public static DataStore openReadOnly(Path dir, MetadataDb db, LogArchive archive) {
        return new DataStore(Settings.defaults(dir), db, DiskSpace.of(dir), true, archive);
    }

    private void refuseIfReadOnly(String what) {
        logs.ensureWritable(what);
    }

    /** As {@link #open(Settings, MetadataDb)}, asking {@code disk} for free space (a simulated disk in tests). */
    public static DataStore open(Settings settings, MetadataDb db, DiskSpace disk) {
        return new DataStore(settings, db, disk, false);
    }

    /**
     * The PBN range the store whose catalog is {@code db} was created for ({@link PbnRange#STANDALONE}
     * when it records none): what offline tools open the store and its GC metadata over.
     */
    public static PbnRange storedRange(MetadataDb db) {
        return StoreRange.stored(db);
    }

    /** The PBN range this store hands out from. */
    public PbnRange range() {
        return range;
    }

    public Recovery recovery() {
        return recovery;
    }

    public Path dir() {
        return settings.dir();
    }

    /**
     * Appends one block in its stored form and returns its new PBN. {@code codec} is
     * {@link FormatVersions#CODEC_RAW} or {@link FormatVersions#CODEC_ZSTD}; {@code rawLength} is the
     * block size. Not durable until the next {@link #sync()}.
     *
     * @throws StorageFullException if the disk is (nearly) full; nothing was appended
     */
    public long append(byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        return active.append(fps, fpOff, payload, off, storedLength, codec, rawLength);
    }

    /**
     * Appends one zstd frame of {@code members} blocks of {@code blockSize} bytes, as it came
     * ({@code frame[off..off+storedLength)}), as one frame record, and returns the first PBN:
     * member k gets first + k and the fingerprint {@code fps[fpOff + 32k..+32)}. The caller has
     * checked every member against its fingerprint. Frames go to version 2 logs only: an active
     * version 1 log is sealed first. Not durable until the next {@link #sync()}.
     *
     * @throws StorageFullException if the disk is (nearly) full; nothing was appended
     */
    public long appendFrame(byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize) {
        return active.appendFrame(fps, fpOff, members, frame, off, storedLength, blockSize);
    }

    /**
     * Repairs bad block {@code pbn} with a new copy: appends a record for the same PBN holding the
     * stored payload, whose fingerprint {@code fps[fpOff..+32)} the caller verified against the
     * uploaded bytes. Returns false and writes nothing unless the PBN is marked bad and its location
     * holds exactly that fingerprint.
     *
     * <p>Crash safety: the new record lies past the durable point until the next {@link #sync()},
     * which writes the PBN's new location, the removal of its bad mark and the durable point
     * covering the record in one synced batch. A crash before it truncates the record away and
     * leaves the PBN bad (pointing at the old copy); after it, the PBN names the new copy, whose
     * old record is dead space that compaction drops (its location no longer names it). The caller
     * must keep GC from freeing the PBN meanwhile (reference guard).
     *
     * @throws StorageFullException if the disk is (nearly) full; nothing was appended
     */
    public boolean repair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        return repair.repair(pbn, fps, fpOff, payload, off, storedLength, codec, rawLength);
    }

    /**
     * Marks {@code pbn} bad for a failure found above the record check (its stored bytes do not
     * decode to the fingerprint the index holds); false if it has no location or was marked already.
     */
    public boolean markDamaged(long pbn, String problem) {
        return repair.markDamaged(pbn, problem);
    }

    /** Marks a block bad that compaction found damaged (the location index holds fingerprint {@code fps[fpOff..+32)}). */
    void markBad(long pbn, byte[] fps, int fpOff, String file, long offset, String problem) {
        reads.corruptBlock(file, pbn, offset, problem, fps, fpOff);
    }

    /**
     * Reads block {@code pbn} as stored into {@code into}, checking its record header and CRC32C. A
     * member of a frame comes decoded (codec raw) and checked against its fingerprint too, so a read
     * never yields other bytes than the block's.
     *
     * @throws CorruptDataException if the PBN has no location or its record fails a check
     */
    public void read(long pbn, StoredBlock into) {
        reads.read(pbn, into);
    }

    /**
     * Reads up to {@code n} blocks, {@code pbns[from..from+n)}, into {@code into} (as many as its
     * capacity and buffer hold, at least one) and returns how many it read. Locations come from one
     * index iterator; records adjacent in a log are read with one positional read. Every record is
     * checked like in {@link #read}.
     *
     * @throws CorruptDataException if a PBN has no location or its record fails a check
     */
    public int readBatch(long[] pbns, int from, int n, BlockBatch into) {
        return reads.readBatch(pbns, from, n, into);
    }

    /**
     * Loads the fingerprints of {@code pbns[0..n)} into {@code out} (32 bytes each, at i * 32) and
     * sets {@code found[i]} to whether PBN i is known; PBN 0 is never found. One index iterator
     * serves the whole run, so PBNs that follow each other cost a step, not a point lookup.
     * {@code scratch} ({@code n} entries) is the caller's.
     */
    public void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch) {
        reads.fingerprints(pbns, n, out, found, scratch);
    }

    /**
     * The PBNs of {@code pbns[0..count)} this store still holds, in order, into {@code known}, with
     * their fingerprints into {@code fps} (32 bytes each); returns how many. What a reclaimer frees:
     * a PBN freed before (a sweep cut short by a crash) is skipped.
     */
    public int stillStored(long[] pbns, int count, long[] known, byte[] fps, StoredBlock scratch) {
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (fingerprint(pbns[i], scratch)) {
                known[n] = pbns[i];
                System.arraycopy(scratch.fingerprint(), 0, fps, n * Fingerprint.BYTES, Fingerprint.BYTES);
                n++;
            }
        }
        return n;
    }

    /** Loads the fingerprint of {@code pbn} into {@code scratch.fingerprint()}; false if the PBN is unknown. */
    public boolean fingerprint(long pbn, StoredBlock scratch) {
        return pbn > 0 && reads.locate(pbn, scratch);
    }

    /** Makes every block appended so far durable and indexed (see the class comment). */
    public void sync() {
        if (readOnly) {
            return; // nothing was appended, and the durable point stays as the server left it
        }
        storeSync.sync();
    }

    /**
     * Refuses with {@link StorageFullException} unless the data disk has room for a new backup to
     * start above the reserve (asks the file system now).
     */
    public void checkSpace() {
        reserve.require(BEGIN_HEADROOM);
    }

    /** The free-space reserve ingest may not cross. */
    public SpaceReserve reserve() {
        return reserve;
    }

    public Stats stats() {
        synchronized (appendLock) {
            return new Stats(pbnReservation.next(), active.appendedBlocks(), active.appendedBytes(), storeSync.syncs(), active.log().id());
        }
    }

    /** Bad blocks repaired in place since the store opened. */
    public long repairedBlocks() {
        return repair.repairedBlocks();
    }

    /**
     * Hands out no PBN below {@code pbn} from now on (it must lie in the range, or be its limit): the
     * PBNs between the next one and it are skipped, as a crash skips the rest of a reservation. The
     * reservation covers {@code pbn} durably before this returns, so a restart does not go back below
     * it. A worker that takes a range over skips past every PBN its master heard an earlier node hand
     * out, blocks of sessions that never reached the object store among them. Nothing if the next PBN is above.
     */
    public void skipTo(long pbn) {
        refuseIfReadOnly("skip PBNs");
        if (pbn < range.first() || pbn > range.limit()) {
            throw new IllegalArgumentException("PBN " + pbn + " is outside the store's range " + range);
        }
        synchronized (appendLock) {
            logs.ensureOpen();
            pbnReservation.skipTo(pbn);
        }
    }

    /** The PBN the next append will get (every PBN below it was handed out or skipped). */
    public long nextPbn() {
        synchronized (appendLock) {
            return pbnReservation.next();
        }
    }

    /**
     * Data-log regions read so far by {@link #read} and {@link #readBatch}: one per positional read
     * (records lying back to back in a log share one). MB restored per region is the restore speed factor.
     */
    public long regionsRead() {
        return reads.regionsRead();
    }

    /** The registry of bad blocks (marked by failed reads, verify and compaction; cleared by a repair or GC). */
    public BadBlocks badBlocks() {
        return badBlocks;
    }

    /**
     * Calls {@code listener} with the id of a data log a read found missing, once its blocks were
     * newly marked bad (on the reading thread, before the read fails), so the snapshots using them
     * can be flagged.
     */
    public void onLogMissing(IntConsumer listener) {
        missingLogs.onSwept(listener);
    }

    /** How many missing data logs had their blocks marked bad since the store opened (tests, diagnostics). */
    public int missingLogsSwept() {
        return missingLogs.sweeps();
    }

    /** The possession fingerprints (and domain keys) of stored blocks. */
    public PossessionIndex possession() {
        return possession;
    }

    /** The location index, for fsck and compaction. */
    public LocationIndex locations() {
        return locations;
    }

    /**
     * Logs with an id below this one are sealed and every record in them is indexed (the durable
     * point lies in a later log), so compaction may rewrite them. 0 before the first sync.
     */
    public int compactableBelow() {
        return storeSync.compactableBelow();
    }

    /**
     * Seals active log {@code logId} and makes it compactable: rolls to a new log, as a full log
     * does, then syncs, so the durable point moves into the new log and every record of the sealed
     * one is indexed. A crash between the roll and the sync is the crash of an ordinary roll (the
     * empty new log is dropped and the old one truncated to the durable point: only unsynced
     * appends go, which nobody relied on). Returns false, changing nothing, when {@code logId} is
     * no longer the active log (a roll came first) or holds no record.
     */
    public boolean sealActive(int logId) {
        refuseIfReadOnly("seal the active data log");
        if (!active.sealForCompaction(logId)) {
            return false;
        }
        KillPoints.hit(KillPoints.COMPACTION_AFTER_ROLL);
        sync();
        return true;
    }

    /** The active log's id and durable length (its indexed part) as of the last sync. */
    public long[] durablePoint() {
        return storeSync.durablePoint();
    }

    /**
     * Deletes the locations of {@code pbns[0..n)} in one synced batch (GC freed them): the store then
     * treats them as gone. Atomic with respect to a relocation (see the class comment).
     */
    public void forget(long[] pbns, int n) {
        refuseIfReadOnly("forget blocks");
        for (int i = 0; i < n; i++) {
            StoreRange.requireIn(range, pbns[i], "forget", settings.dir());
        }
        relocation.readLock().lock();
        try (MetadataBatch batch = new MetadataBatch()) {
            for (int i = 0; i < n; i++) {
                locations.delete(batch, pbns[i]);
                possession.delete(batch, pbns[i]);
                if (badBlocks.isBad(pbns[i])) {
                    badBlocks.clear(batch, pbns[i]);
                }
                db.delete(batch, db.handle(MetadataDb.Column.VERIFY), VerifyLedger.pbnKey(pbns[i]));
            }
            db.write(batch, true);
            if (!badBlocks.isEmpty()) {
                for (int i = 0; i < n; i++) {
                    badBlocks.cleared(pbns[i]);
                }
            }
        } finally {
            relocation.readLock().unlock();
        }
    }

    MetadataDb metadata() {
        return db;
    }

    /** Path of log {@code id} in the data directory. */
    Path logPath(int id) {
        return logs.path(id);
    }

    /**
     * Step 2 and 3 of a compaction of sealed log {@code logId} (see {@link Compactor}): under the
     * exclusive relocation lock, keeps only the records whose location still names their old place
     * (the sweep may have freed some since they were copied), points those at their offsets in
     * {@code compacted} together with the intent in one synced batch, then renames {@code compacted}
     * over the log. Readers then open the new file. Returns how many locations moved.
     */
    int relocate(int logId, Path compacted, LiveRecords records) {
        return relocate(logId, compacted, records, -1);
    }

    /**
     * As {@link #relocate(int, Path, LiveRecords)}; with an archive, {@code objectEpoch} is the
     * compacted copy's (already uploaded): the log's upload record switches to it in the same batch.
     */
    int relocate(int logId, Path compacted, LiveRecords records, long objectEpoch) {
        refuseIfReadOnly("compact");
        return relocations.relocate(logId, compacted, records, objectEpoch);
    }

    /** Deletes sealed log {@code logId}, which no location names any more (compaction found it dead). */
    void dropLog(int logId) {
        refuseIfReadOnly("drop a log");
        relocations.dropLog(logId);
    }

    /**
     * Cuts sealed log {@code logId} to {@code length}, the end of its last live record (a dead tail
     * left for lack of room to copy the log; {@link LogRelocation#trimLog}).
     */
    void trimLog(int logId, long length) {
        refuseIfReadOnly("trim a log");
        relocations.trimLog(logId, length);
    }

    /** Syncs, then closes every log. Idempotent. */
    @Override
    public void close() {
        relocation.writeLock().lock();
        try {
            closeLocked();
        } finally {
            relocation.writeLock().unlock();
        }
    }

    private void closeLocked() {
        synchronized (syncLock) {
            synchronized (appendLock) {
                if (logs.isClosed()) {
                    return;
                }
            }
            if (!db.isClosed()) {
                sync();
                releaseReservation();
            }
            synchronized (appendLock) {
                logs.closeAll();
                reads.closeCodecs();
            }
        }
    }

    /**
     * Seals the active log if it holds any record, and makes that durable: every block appended
     * before the call then lies in a sealed log, which backend s3 uploads. A catalog backup calls it
     * after its copy, so that the bucket holds every block the backup names (a new disk restores from
     * the bucket alone). Returns the active log's id afterwards: every log below it is sealed.
     */
    public int sealActiveLog() {
        refuseIfReadOnly("seal the active log");
        active.sealIfNotEmpty();
        sync(); // the durable point moves into the new log, so the sealed ones are final and go to the archive
        synchronized (appendLock) {
            return active.log().id();
        }
    }

    /**
     * At an orderly close, after the last sync: hands the PBNs reserved but never given out back, so
     * the next start continues at {@link #nextPbn} and PBNs stay dense (the GC's per-PBN tables span
     * the highest PBN). Only a crash leaves a gap, as it must: PBNs handed out before it are never
     * reused.
     */
    private void releaseReservation() {
        synchronized (appendLock) {
            if (!readOnly) {
                pbnReservation.release();
            }
        }
    }
}
