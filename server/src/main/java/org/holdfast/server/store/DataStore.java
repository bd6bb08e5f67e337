package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;
import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntConsumer;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
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
 */
public final class DataStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DataStore.class.getName());
    private static final String STORE = "data-store";
    /** Room above GC's floor {@link #sealActive} wants: a new log's header, with a margin. */
    private static final long SEAL_ROOM = 1L << 16;
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
    private final Map<Integer, DataLog> logs = new ConcurrentHashMap<>();
    private final Object appendLock = new Object();
    private final Object syncLock = new Object();
    private final ReentrantReadWriteLock relocation = new ReentrantReadWriteLock();
    /** Serialises compactions of this store (one intent key, one log at a time). */
    final Object compactionLock = new Object();
    private final AtomicLong appendedBlocks = new AtomicLong();
    private final AtomicLong appendedBytes = new AtomicLong();
    private final AtomicLong syncs = new AtomicLong();
    private final AtomicLong repairedBlocks = new AtomicLong();
    // data-log regions (one positional read each) read for callers, for the restore speed factor
    private final AtomicLong regionsRead = new AtomicLong();
    // changes whenever a record offset may come to name another record (a compaction's switch, a dropped
    // log, another store instance), so that a reader's cached decoded frame is never taken for a newer one
    private static final AtomicLong EPOCHS = new AtomicLong();
    private volatile long epoch = EPOCHS.incrementAndGet();
    // zstd contexts for decoding frames in read(), borrowed per frame and closed with the store
    private final ConcurrentLinkedQueue<BlockCodec> codecs = new ConcurrentLinkedQueue<>();

    // guarded by appendLock
    private volatile DataLog active;
    private long nextPbn;
    private long reservedPbn;
    private final UnindexedLocations pending = new UnindexedLocations(1024, true);
    // repairs appended since the last sync: new copies of bad PBNs (see repair)
    private final UnindexedLocations repairs = new UnindexedLocations(16, false);
    private final byte[] recordBuf = new byte[RECORD_HEADER_BYTES + FormatVersions.MAX_STORED_BYTES];
    private final ByteBuffer recordView = ByteBuffer.wrap(recordBuf);
    private final CRC32C crc = new CRC32C();
    private boolean closed;
    /** Opened by a checker: nothing on disk is written, moved or deleted (see {@link #openReadOnly}). */
    private final boolean readOnly;
    /** Backend s3: sealed logs are uploaded and fetched back when their file is gone; null for a local store. */
    private final LogArchive archive;

    // guarded by syncLock
    private int durableLogId;
    private long durableLength;

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
        this.recovery = readOnly ? openLogsReadOnly() : recover();
        reserve.unwritten(() -> active.buffered()); // read without the append lock: a byte more or less is no harm
        if (archive != null && !readOnly) {
            archive.cache().attach(uploadedLocalLogs(), this::evictLocalLog);
            archive.sealedBelow(durableLogId); // uploads a crash interrupted resume now
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
        return logs.containsKey(id) || Files.exists(logPath(id));
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

    private Recovery openLogsReadOnly() {
        Path dir = settings.dir();
        if (db.metaLong(Compactor.META_INTENT, -1) >= 0) {
            throw new StoreException(STORE, dir.toString(), Compactor.META_INTENT, "a compaction was interrupted and is completed"
                    + " only when a server opens the store; start the server once, stop it, then check again", null);
        }
        DurablePoint dp = DurablePoint.read(db, STORE);
        if (dp == null) {
            throw new CorruptDataException(STORE, db.path(), FormatVersions.META_DURABLE_POINT, "the catalog has no durable point");
        }
        active = dp.openLog(dir, dir.resolve(DataLog.fileName(dp.logId())), true, STORE);
        logs.put(dp.logId(), active);
        durableLogId = dp.logId();
        durableLength = dp.length();
        continuePbns();
        return new Recovery(dp.logId(), dp.length(), 0, 0);
    }

    private void refuseIfReadOnly(String what) {
        if (readOnly) {
            throw new IllegalStateException("the data store in " + settings.dir() + " is open read-only (a checker); cannot " + what);
        }
    }

    /** As {@link #open(Settings, MetadataDb)}, asking {@code disk} for free space (a simulated disk in tests). */
    public static DataStore open(Settings settings, MetadataDb db, DiskSpace disk) {
        return new DataStore(settings, db, disk, false);
    }

    private Recovery recover() {
        Path dir = settings.dir();
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
            logs.put(1, active);
            try (MetadataBatch b = new MetadataBatch()) {
                StoreRange.record(db, b, range); // in the batch that creates the store: no store without its range
                writeDurablePoint(1, DATA_LOG_HEADER_BYTES, b);
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
            logs.put(id, active);
            durableLogId = id;
            durableLength = len;
        }
        continuePbns();
        return new Recovery(active.id(), active.size(), dropped, deleted);
    }

    /**
     * At open: the next PBN is above every one reserved or indexed, so none is handed out twice, and
     * not below the range's first.
     */
    private void continuePbns() {
        nextPbn = Math.max(Math.max(db.metaLong(FormatVersions.META_PBN_RESERVED, range.first()), locations.maxPbn() + 1), range.first());
        reservedPbn = nextPbn;
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

    /** Refuses a PBN outside the range before anything is read or changed. */
    private void requireInRange(long pbn, String what) {
        if (!range.contains(pbn)) {
            throw new IllegalArgumentException("cannot " + what + " PBN " + pbn + ": it lies outside the PBN range " + range
                    + " of the data store in " + settings.dir() + (pbn <= 0 ? " (PBN 0 is no block)" : " (another node's block?)")
                    + "; nothing was changed");
        }
    }

    /** Refuses an append of {@code count} PBNs from {@code first} that would pass the range's limit. Under the append lock. */
    private void requireRoom(long first, int count) {
        if (first > range.limit() - count) {
            throw new PbnRangeFullException(settings.dir().toString(), range, first, count);
        }
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
        if (!FormatVersions.isStoredCodec(codec)) {
            throw new IllegalArgumentException("cannot store codec " + codec);
        }
        if (storedLength <= 0 || storedLength > FormatVersions.MAX_STORED_BYTES) {
            throw new IllegalArgumentException("stored length " + storedLength + " outside 1.." + FormatVersions.MAX_STORED_BYTES);
        }
        if (rawLength <= 0 || rawLength > FormatVersions.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("raw length " + rawLength + " outside 1.." + FormatVersions.MAX_BLOCK_SIZE);
        }
        int recordLength = RECORD_HEADER_BYTES + storedLength;
        refuseIfReadOnly("append");
        synchronized (appendLock) {
            ensureOpen();
            requireRoom(nextPbn, 1);
            makeRoom(recordLength, false);
            long pbn = nextPbn;
            if (pbn >= reservedPbn) {
                reserve(reservationEnd(pbn + 1));
            }
            System.arraycopy(payload, off, recordBuf, RECORD_HEADER_BYTES, storedLength);
            RecordFormat.writeHeader(recordBuf, pbn, codec, rawLength, storedLength, crc);
            long at = appendRecord(recordLength, pbn);
            pending.add(pbn, active.id(), at, storedLength, fps, fpOff);
            nextPbn = pbn + 1;
            appendedBlocks.incrementAndGet();
            appendedBytes.addAndGet(storedLength);
            return pbn;
        }
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
        if (members < 1 || members > FormatVersions.FRAME_MAX_MEMBERS) {
            throw new IllegalArgumentException("a frame holds 1.." + FormatVersions.FRAME_MAX_MEMBERS + " members, not " + members);
        }
        if (!FormatVersions.isValidBlockSize(blockSize) || (long) members * blockSize > FormatVersions.FRAME_MAX_RAW) {
            throw new IllegalArgumentException(members + " blocks of " + blockSize + " bytes do not make a frame of at most "
                    + FormatVersions.FRAME_MAX_RAW + " bytes");
        }
        if (storedLength <= 0 || storedLength > FormatVersions.FRAME_MAX_STORED) {
            throw new IllegalArgumentException("frame stored length " + storedLength + " outside 1.." + FormatVersions.FRAME_MAX_STORED);
        }
        int recordLength = RECORD_HEADER_BYTES + storedLength;
        refuseIfReadOnly("append");
        synchronized (appendLock) {
            ensureOpen();
            // a release that knows only block records then refuses the log instead of misreading it
            requireRoom(nextPbn, members);
            makeRoom(recordLength, active.version() < FormatVersions.DATA_LOG_VERSION);
            long first = nextPbn;
            if (first + members > reservedPbn) {
                reserve(reservationEnd(first + members));
            }
            System.arraycopy(frame, off, recordBuf, RECORD_HEADER_BYTES, storedLength);
            FrameFormat.writeHeader(recordBuf, 0, first, members, members * blockSize, storedLength, 0, crc);
            long at = appendRecord(recordLength, first);
            int location = FrameFormat.memberLocation(storedLength, members);
            for (int k = 0; k < members; k++) {
                pending.add(first + k, active.id(), at, location, fps, fpOff + k * Fingerprint.BYTES);
            }
            nextPbn = first + members;
            appendedBlocks.addAndGet(members);
            appendedBytes.addAndGet(storedLength);
            return first;
        }
    }

    /**
     * Charges the space reserve for a record of {@code recordLength} bytes and rolls to a new log if
     * it does not fit the active one (or {@code roll} says so). Under the append lock; before
     * anything changes, so a refused append leaves the store as it was.
     */
    private void makeRoom(int recordLength, boolean roll) {
        boolean rolls = roll || active.size() + recordLength > settings.rollBytes() && active.size() > DATA_LOG_HEADER_BYTES;
        reserve.charge(recordLength + (rolls ? DATA_LOG_HEADER_BYTES : 0));
        if (rolls) {
            roll();
        }
    }

    /** Appends the record in {@code recordBuf[0..recordLength)} to the active log; returns its offset. Under the append lock. */
    private long appendRecord(int recordLength, long pbn) {
        recordView.clear().limit(recordLength);
        try {
            return active.append(recordView, pbn);
        } catch (StorageFullException e) {
            reserve.invalidate(); // someone else filled the disk: look again next time
            throw e;
        }
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
        if (pbn > 0) {
            requireInRange(pbn, "repair");
        }
        if (pbn <= 0 || !badBlocks.isBad(pbn)) {
            return false;
        }
        StoredBlock current = new StoredBlock(1);
        if (!locate(pbn, current)
                || !Arrays.equals(current.fingerprint, 0, Fingerprint.BYTES, fps, fpOff, fpOff + Fingerprint.BYTES)) {
            LOG.log(Level.WARNING, "not repairing bad block PBN {0}: the upload's fingerprint differs from the one it must hold", pbn);
            return false;
        }
        if (!FormatVersions.isStoredCodec(codec) || storedLength <= 0 || storedLength > FormatVersions.MAX_STORED_BYTES
                || rawLength <= 0 || rawLength > FormatVersions.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("cannot repair with codec " + codec + ", stored length " + storedLength + ", raw length " + rawLength);
        }
        int recordLength = RECORD_HEADER_BYTES + storedLength;
        synchronized (appendLock) {
            ensureOpen();
            checkSpace();
            if (active.size() + recordLength > settings.rollBytes() && active.size() > DATA_LOG_HEADER_BYTES) {
                roll();
            }
            System.arraycopy(payload, off, recordBuf, RECORD_HEADER_BYTES, storedLength);
            RecordFormat.writeHeader(recordBuf, pbn, codec, rawLength, storedLength, crc);
            recordView.clear().limit(recordLength);
            long at = active.append(recordView, pbn);
            KillPoints.hit(KillPoints.REPAIR_AFTER_APPEND);
            repairs.add(pbn, active.id(), at, storedLength, fps, fpOff);
            appendedBlocks.incrementAndGet();
            appendedBytes.addAndGet(storedLength);
        }
        LOG.log(Level.INFO, "repairing bad block PBN {0} with an uploaded copy of the same fingerprint", pbn);
        return true;
    }

    /** Marks {@code pbn} bad and answers the failure that names it; called where a record fails its check. */
    private CorruptBlockException corruptBlock(String file, long pbn, long offset, String problem, byte[] fps, int fpOff) {
        try {
            badBlocks.mark(pbn, fps, fpOff, file, problem + " (record at offset " + offset + ")");
        } catch (StoreException e) {
            LOG.log(Level.WARNING, "cannot record PBN " + pbn + " as bad: " + e.getMessage());
        }
        return new CorruptBlockException(file, pbn, offset, problem);
    }

    /**
     * Marks {@code pbn} bad for a failure found above the record check (its stored bytes do not
     * decode to the fingerprint the index holds); false if it has no location or was marked already.
     */
    public boolean markDamaged(long pbn, String problem) {
        if (pbn > 0) {
            requireInRange(pbn, "mark damaged");
        }
        StoredBlock at = new StoredBlock(1);
        if (pbn <= 0 || !locate(pbn, at)) {
            return false;
        }
        return badBlocks.mark(pbn, at.fingerprint, 0, logPath(at.logId).toString(), problem + " (record at offset " + at.offset + ")");
    }

    /** Marks a block bad that compaction found damaged (the location index holds fingerprint {@code fps[fpOff..+32)}). */
    void markBad(long pbn, byte[] fps, int fpOff, String file, long offset, String problem) {
        corruptBlock(file, pbn, offset, problem, fps, fpOff);
    }

    /**
     * Reads block {@code pbn} as stored into {@code into}, checking its record header and CRC32C. A
     * member of a frame comes decoded (codec raw) and checked against its fingerprint too, so a read
     * never yields other bytes than the block's.
     *
     * @throws CorruptDataException if the PBN has no location or its record fails a check
     */
    public void read(long pbn, StoredBlock into) {
        if (pbn <= 0) {
            throw new IllegalArgumentException("PBN " + pbn + " is not a stored block");
        }
        requireInRange(pbn, "read");
        relocation.readLock().lock();
        try {
            readLocked(pbn, into);
        } finally {
            relocation.readLock().unlock();
        }
    }

    private void readLocked(long pbn, StoredBlock into) {
        if (!locate(pbn, into)) {
            throw new BlockNotStoredException(settings.dir().toString(), pbn);
        }
        int len = FrameFormat.recordStored(into.location);
        if (len <= 0 || len > into.capacity()) {
            throw new CorruptDataException("location-index", db.path(), "pbn " + pbn,
                    "stored length " + len + " outside 1.." + into.capacity());
        }
        LogReader log = log(into.logId, pbn, into.offset, into.fingerprint, 0);
        if (FrameFormat.isMember(into.location)) {
            readMember(pbn, into, len, log);
            return;
        }
        into.frameEpoch = -1; // the record buffer no longer holds the cached frame's header
        into.data = into.record;
        into.dataOffset = RECORD_HEADER_BYTES;
        readRecords(log, into.offset, into.view, 0, RECORD_HEADER_BYTES + len, pbn, into.fingerprint, 0);
        regionsRead.incrementAndGet();
        String problem = RecordFormat.check(into.record, pbn, len, into.crc);
        if (problem != null) {
            throw corruptBlock(log.name(), pbn, into.offset, problem, into.fingerprint, 0);
        }
        into.codec = RecordFormat.codec(into.record);
        into.rawLength = RecordFormat.rawLength(into.record);
    }

    /** Reads member {@code pbn} of the frame record of {@code len} stored bytes that {@code into} located (decoding it unless cached). */
    private void readMember(long pbn, StoredBlock into, int len, LogReader log) {
        long now = epoch;
        if (into.frameEpoch != now || into.frameLog != into.logId || into.frameOffset != into.offset) {
            into.frameEpoch = -1;
            readRecords(log, into.offset, into.view, 0, RECORD_HEADER_BYTES + len, pbn, into.fingerprint, 0);
            regionsRead.incrementAndGet();
            String problem = FrameFormat.check(into.record, 0, len, into.crc);
            if (problem != null) {
                throw corruptBlock(log.name(), pbn, into.offset, problem, into.fingerprint, 0);
            }
            if (into.frame == null) {
                into.frame = new byte[FormatVersions.FRAME_MAX_RAW];
            }
            int payload = FrameFormat.payloadOffset(into.record, 0);
            BlockCodec codec = codecs.poll();
            try {
                if (codec == null) {
                    codec = new BlockCodec();
                }
                codec.decompress(into.record, payload, RECORD_HEADER_BYTES + len - payload, into.frame, 0, FrameFormat.rawLength(into.record, 0));
            } catch (CorruptPayloadException e) {
                throw corruptBlock(log.name(), pbn, into.offset, "frame does not decode: " + e.getMessage(), into.fingerprint, 0);
            } finally {
                if (codec != null) {
                    codecs.add(codec);
                }
            }
            into.frameLog = into.logId;
            into.frameOffset = into.offset;
            into.frameEpoch = now;
        }
        int k = FrameFormat.memberIndex(into.record, 0, pbn);
        if (k < 0) {
            throw corruptBlock(log.name(), pbn, into.offset, "the frame record does not hold this PBN", into.fingerprint, 0);
        }
        int bs = FrameFormat.blockSize(into.record, 0);
        int at = k * bs;
        BlockHasher.forCurrentThread().sha256(into.frame, at, bs, into.digest, 0);
        if (!Arrays.equals(into.digest, into.fingerprint) && !(isZeroFingerprint(into.fingerprint) && ZeroBlocks.isZero(into.frame, at, bs))) {
            throw corruptBlock(log.name(), pbn, into.offset, "member " + k + " of the frame does not match its fingerprint (SHA-256)",
                    into.fingerprint, 0);
        }
        into.codec = FormatVersions.CODEC_RAW;
        into.rawLength = bs;
        into.storedLength = bs;
        into.data = into.frame;
        into.dataOffset = at;
    }

    /**
     * Reads a stretch of records. A log read from its object that cannot give them (the object is
     * gone, or shorter than the log was) has lost the block: it is marked bad and reported as such,
     * so the next backup of its content repairs it. An outage of the store is no such failure: it
     * passes through as {@link org.holdfast.server.store.object.ObjectStoreUnavailableException}.
     */
    private void readRecords(LogReader log, long offset, ByteBuffer dst, int dstPos, int len, long pbn, byte[] fps, int fpOff) {
        try {
            log.read(offset, dst, dstPos, len, pbn);
        } catch (CorruptDataException e) {
            if (log instanceof DataLog) {
                throw e;
            }
            if (e instanceof DataLogMissingException gone) {
                missingLogs.sweep(gone.logId()); // the whole object is gone, not a range of it
            }
            throw corruptBlock(log.name(), pbn, offset, e.getMessage(), fps, fpOff);
        }
    }

    private static boolean isZeroFingerprint(byte[] fp) {
        for (byte b : fp) {
            if (b != 0) {
                return false;
            }
        }
        return true;
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
        into.count = 0;
        int m = Math.min(n, into.capacity());
        if (m <= 0) {
            return 0;
        }
        for (int i = 0; i < m; i++) {
            if (pbns[from + i] <= 0) {
                throw new IllegalArgumentException("PBN " + pbns[from + i] + " is not a stored block");
            }
            requireInRange(pbns[from + i], "read");
        }
        relocation.readLock().lock();
        try {
            return readBatchLocked(pbns, from, m, into);
        } finally {
            relocation.readLock().unlock();
        }
    }

    private int readBatchLocked(long[] pbns, int from, int m, BlockBatch into) {
        // Pending first, then the index (see locate): an entry leaves pending only once indexed.
        boolean anyIndexed = false;
        synchronized (appendLock) {
            for (int i = 0; i < m; i++) {
                long pbn = pbns[from + i];
                int p = pending.indexOf(pbn);
                into.fromPending[i] = p >= 0;
                if (p >= 0) {
                    into.pbn[i] = pbn;
                    into.logId[i] = pending.logId(p);
                    into.offset[i] = pending.offset(p);
                    into.location[i] = pending.location(p);
                    pending.copyFingerprint(p, into.fingerprints, i * Fingerprint.BYTES);
                } else {
                    anyIndexed = true;
                }
            }
        }
        if (anyIndexed) {
            int missing = locations.getAll(pbns, from, m, into.fromPending, into);
            if (missing >= 0) {
                throw new BlockNotStoredException(settings.dir().toString(), pbns[from + missing]);
            }
        }
        // place the records back to back in the buffer, as many as fit; a frame named before in this batch is not placed again
        into.refilled();
        into.records = 0;
        int used = 0;
        int k = 0;
        for (; k < m; k++) {
            int loc = into.location[k];
            int len = FrameFormat.recordStored(loc);
            if (len <= 0 || len > FormatVersions.MAX_STORED_BYTES) {
                throw new CorruptDataException("location-index", db.path(), "pbn " + into.pbn[k],
                        "stored length " + len + " outside 1.." + FormatVersions.MAX_STORED_BYTES);
            }
            if (FrameFormat.isMember(loc)) {
                int r = placed(into, into.logId[k], into.offset[k]);
                if (r >= 0) {
                    into.at[k] = into.recAt[r];
                    continue;
                }
            }
            int rec = RECORD_HEADER_BYTES + len;
            if (used == 0 && rec > into.buf.length && FrameFormat.isMember(loc)) {
                into.growForAnyRecord();
            }
            if (used + rec > into.buf.length) {
                if (k == 0) {
                    throw new CorruptDataException("location-index", db.path(), "pbn " + into.pbn[k],
                            "stored length " + len + " does not fit the reader's buffer of " + into.buf.length);
                }
                break;
            }
            int r = into.records++;
            into.recAt[r] = used;
            into.recLog[r] = into.logId[k];
            into.recOffset[r] = into.offset[k];
            into.recLength[r] = rec;
            into.recFirst[r] = k;
            into.at[k] = used;
            used += rec;
        }
        // one read per stretch of records that lie back to back in the same log
        int i = 0;
        while (i < into.records) {
            int j = i + 1;
            long end = into.recOffset[i] + into.recLength[i];
            while (j < into.records && into.recLog[j] == into.recLog[i] && into.recOffset[j] == end) {
                end += into.recLength[j];
                j++;
            }
            int first = into.recFirst[i];
            LogReader log = log(into.recLog[i], into.pbn[first], into.offset[first], into.fingerprints, first * Fingerprint.BYTES);
            readRecords(log, into.recOffset[i], into.view, into.recAt[i], (int) (end - into.recOffset[i]), into.pbn[first], into.fingerprints,
                    first * Fingerprint.BYTES);
            regionsRead.incrementAndGet();
            for (int r = i; r < j; r++) {
                int b = into.recFirst[r];
                int stored = into.recLength[r] - RECORD_HEADER_BYTES;
                String problem = FrameFormat.isMember(into.location[b]) ? FrameFormat.check(into.buf, into.recAt[r], stored, into.crc)
                        : RecordFormat.check(into.buf, into.recAt[r], into.pbn[b], stored, into.crc);
                if (problem != null) {
                    throw corruptBlock(log.name(), into.pbn[b], into.offset[b], problem, into.fingerprints, b * Fingerprint.BYTES);
                }
            }
            i = j;
        }
        for (int b = 0; b < k; b++) {
            into.member[b] = FrameFormat.isMember(into.location[b]) ? FrameFormat.memberIndex(into.buf, into.at[b], into.pbn[b]) : -1;
            if (FrameFormat.isMember(into.location[b]) && into.member[b] < 0) {
                throw corruptBlock(logPath(into.logId[b]).toString(), into.pbn[b], into.offset[b], "the frame record does not hold this PBN",
                        into.fingerprints, b * Fingerprint.BYTES);
            }
        }
        into.count = k;
        return k;
    }

    /** The record of {@code into} that holds the frame at {@code logId}/{@code offset}, or -1 if none was placed yet. */
    private static int placed(BlockBatch into, int logId, long offset) {
        for (int r = into.records - 1; r >= 0; r--) {
            if (into.recOffset[r] == offset && into.recLog[r] == logId) {
                return r;
            }
        }
        return -1;
    }

    /**
     * Loads the fingerprints of {@code pbns[0..n)} into {@code out} (32 bytes each, at i * 32) and
     * sets {@code found[i]} to whether PBN i is known; PBN 0 is never found. One index iterator
     * serves the whole run, so PBNs that follow each other cost a step, not a point lookup.
     * {@code scratch} ({@code n} entries) is the caller's.
     */
    public void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch) {
        boolean anyIndexed = false;
        // Pending first, then the index (see locate): an entry leaves pending only once indexed.
        synchronized (appendLock) {
            for (int i = 0; i < n; i++) {
                long pbn = pbns[i];
                found[i] = false;
                scratch[i] = false;
                if (pbn <= 0) {
                    continue;
                }
                int p = pending.indexOf(pbn);
                if (p >= 0) {
                    pending.copyFingerprint(p, out, i * Fingerprint.BYTES);
                    found[i] = true;
                } else {
                    scratch[i] = true;
                    anyIndexed = true;
                }
            }
        }
        if (anyIndexed) {
            locations.fingerprints(pbns, n, scratch, out, found, new byte[8], new byte[LocationIndex.VALUE_BYTES]);
        }
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
        return pbn > 0 && locate(pbn, scratch);
    }

    private boolean locate(long pbn, StoredBlock into) {
        synchronized (appendLock) {
            int i = pending.indexOf(pbn);
            if (i >= 0) {
                into.pbn = pbn;
                into.logId = pending.logId(i);
                into.offset = pending.offset(i);
                into.location = pending.location(i);
                into.storedLength = FrameFormat.share(pending.location(i));
                pending.copyFingerprint(i, into.fingerprint, 0);
                return true;
            }
        }
        // Pending entries leave memory only after the index has them, so this order never misses one.
        return locations.get(pbn, into);
    }

    /** Makes every block appended so far durable and indexed (see the class comment). */
    public void sync() {
        if (readOnly) {
            return; // nothing was appended, and the durable point stays as the server left it
        }
        // shared relocation lock: a repair's location switch must not interleave with a compaction's
        relocation.readLock().lock();
        try {
            syncLocked();
        } finally {
            relocation.readLock().unlock();
        }
    }

    private void syncLocked() {
        synchronized (syncLock) {
            DataLog log;
            long length;
            int count;
            long[] repaired;
            try (MetadataBatch batch = new MetadataBatch()) {
                synchronized (appendLock) {
                    ensureOpen();
                    log = active;
                    length = active.size();
                    count = pending.size();
                    if (count == 0 && log.id() == durableLogId && length == durableLength) {
                        return;
                    }
                    for (int i = 0; i < count; i++) {
                        pending.putTo(locations, batch, i);
                    }
                    // Repairs: the PBN's location moves to the new copy in the same synced batch as the
                    // durable point that covers it, and the bad mark goes with it (see repair).
                    repaired = new long[repairs.size()];
                    for (int i = 0; i < repaired.length; i++) {
                        repaired[i] = repairs.pbn(i);
                        if (badBlocks.isBad(repaired[i])) {
                            repairs.putTo(locations, batch, i);
                            badBlocks.clear(batch, repaired[i]);
                        }
                    }
                    repairs.clear();
                }
                if (settings.fsync().forces()) {
                    log.force();
                } else {
                    log.write(); // the durable point must never lie past the file's end
                }
                if (repaired.length > 0) {
                    KillPoints.hit(KillPoints.REPAIR_BEFORE_SWITCH);
                }
                writeDurablePoint(log.id(), length, batch);
            }
            if (repaired.length > 0) {
                KillPoints.hit(KillPoints.REPAIR_AFTER_SWITCH);
            }
            synchronized (appendLock) {
                pending.dropFirst(count);
            }
            for (long p : repaired) {
                if (badBlocks.isBad(p)) {
                    badBlocks.cleared(p);
                    repairedBlocks.incrementAndGet();
                    LOG.log(Level.INFO, "repaired bad block PBN {0}: its location now names a verified new copy", p);
                }
            }
            durableLogId = log.id();
            durableLength = length;
            syncs.incrementAndGet();
            if (archive != null) {
                archive.sealedBelow(durableLogId); // the logs below the durable point's are final now
            }
        }
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
            return new Stats(nextPbn, appendedBlocks.get(), appendedBytes.get(), syncs.get(), active.id());
        }
    }

    /** Bad blocks repaired in place since the store opened. */
    public long repairedBlocks() {
        return repairedBlocks.get();
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
            ensureOpen();
            if (pbn <= nextPbn) {
                return;
            }
            if (pbn > reservedPbn) {
                reserve(pbn);
            }
            nextPbn = pbn;
        }
    }

    /** The PBN the next append will get (every PBN below it was handed out or skipped). */
    public long nextPbn() {
        synchronized (appendLock) {
            return nextPbn;
        }
    }

    /**
     * Data-log regions read so far by {@link #read} and {@link #readBatch}: one per positional read
     * (records lying back to back in a log share one). MB restored per region is the restore speed factor.
     */
    public long regionsRead() {
        return regionsRead.get();
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
        synchronized (syncLock) {
            return durableLogId;
        }
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
        synchronized (appendLock) {
            ensureOpen();
            if (active.id() != logId || active.size() <= DATA_LOG_HEADER_BYTES) {
                return false;
            }
            if (reserve.gcRoom() < SEAL_ROOM) {
                return false; // a roll that cannot create the new log would leave the active log sealed under ingest
            }
            roll(); // not charged to the reserve, which is ingest's: GC may use it (one log header)
            reserve.invalidate();
        }
        KillPoints.hit(KillPoints.COMPACTION_AFTER_ROLL);
        sync();
        return true;
    }

    /** The active log's id and durable length (its indexed part) as of the last sync. */
    public long[] durablePoint() {
        synchronized (syncLock) {
            return new long[] {durableLogId, durableLength};
        }
    }

    /**
     * Deletes the locations of {@code pbns[0..n)} in one synced batch (GC freed them): the store then
     * treats them as gone. Atomic with respect to a relocation (see the class comment).
     */
    public void forget(long[] pbns, int n) {
        refuseIfReadOnly("forget blocks");
        for (int i = 0; i < n; i++) {
            requireInRange(pbns[i], "forget");
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
        return settings.dir().resolve(DataLog.fileName(id));
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
        Path target = logPath(logId);
        int moved = 0;
        LogCache cache = archive == null ? null : archive.cache();
        relocation.writeLock().lock();
        try {
            ensureOpen();
            if (logId >= compactableBelow()) {
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
            DataLog.forceDirectory(settings.dir());
            epoch = EPOCHS.incrementAndGet(); // offsets in this log now name the compacted file's records
            DataLog old = logs.remove(logId); // readers reopen the log, now the compacted file
            if (old != null) {
                closeQuietly(old);
            }
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
        refuseIfReadOnly("drop a log");
        relocation.writeLock().lock();
        try {
            ensureOpen();
            if (logId >= compactableBelow()) {
                throw new IllegalStateException("log " + logId + " is not sealed and indexed; it cannot be dropped");
            }
            DataLog old = logs.remove(logId);
            if (old != null) {
                closeQuietly(old);
            }
            if (archive != null) {
                archive.cache().forgetLog(logId);
            }
            DataLog.deleteFile(logPath(logId));
            DataLog.forceDirectory(settings.dir());
            epoch = EPOCHS.incrementAndGet();
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
        refuseIfReadOnly("trim a log");
        relocation.writeLock().lock();
        try {
            ensureOpen();
            if (logId >= compactableBelow() || archive != null) {
                throw new IllegalStateException("log " + logId + " is not a sealed local log; it cannot be trimmed");
            }
            DataLog old = logs.remove(logId); // readers reopen it
            if (old != null) {
                closeQuietly(old);
            }
            DataLog.truncateFile(logPath(logId), length);
        } finally {
            relocation.writeLock().unlock();
        }
    }

    private static void closeQuietly(DataLog log) {
        try {
            log.close();
        } catch (StoreException e) {
            // a sealed log has nothing buffered; a failing close only leaks the descriptor
            LOG.log(Level.WARNING, "closing " + log.path() + " failed: " + e.getMessage());
        }
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
                if (closed) {
                    return;
                }
            }
            if (!db.isClosed()) {
                sync();
                releaseReservation();
            }
            synchronized (appendLock) {
                closed = true;
                for (DataLog l : logs.values()) {
                    l.close();
                }
                logs.clear();
                for (BlockCodec c = codecs.poll(); c != null; c = codecs.poll()) {
                    c.close();
                }
            }
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreException(STORE, settings.dir().toString(), null, "data store is closed", null);
        }
    }

    /**
     * The reader of log {@code id}: its local file, else (backend s3) the cached ranges of its object.
     * A log that exists nowhere (lost with a disk, or absent after a catalog restore) marks every block
     * it held bad ({@link MissingLogSweep}, once per log), so the damage is recorded the first time anyone
     * meets it and the next backup holding each block's content repairs it; {@code fps[fpOff..+32)} is
     * {@code pbn}'s fingerprint.
     */
    private LogReader log(int id, long pbn, long offset, byte[] fps, int fpOff) {
        DataLog l = logs.get(id);
        if (l != null) {
            if (archive != null) {
                archive.cache().touchLog(id);
            }
            return l;
        }
        if (archive != null && !Files.exists(logPath(id))) {
            LogReader remote = archive.remote(id);
            if (remote != null) {
                return remote; // fetched outside the append lock: a GET must not stall ingest
            }
        }
        DataLog opened;
        synchronized (appendLock) {
            ensureOpen();
            opened = logs.computeIfAbsent(id, k -> {
                Path p = settings.dir().resolve(DataLog.fileName(k));
                return isMissing(p) ? null : readOnly ? DataLog.openReadOnly(p, k) : DataLog.open(p, k);
            });
        }
        if (opened == null) {
            // marked outside the append lock: the marks are synced writes
            missingLogs.sweep(id);
            throw corruptBlock(logPath(id).toString(), pbn, offset, "data log is missing", fps, fpOff);
        }
        if (archive != null) {
            archive.cache().touchLog(id);
        }
        return opened;
    }

    /**
     * Whether log file {@code p} is definitely gone (no such file). Any other failure to look (an I/O
     * error, a permission, a stale handle) is no such statement: it fails the read and marks nothing,
     * as a missing log would have every block of it marked bad ({@link MissingLogSweep}).
     */
    private static boolean isMissing(Path p) {
        try {
            Files.readAttributes(p, BasicFileAttributes.class);
            return false;
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            throw new StoreException(STORE, p.toString(), null, "cannot tell whether data log file " + p + " exists (" + e
                    + "): the read fails and nothing is marked bad; check the data directory's disk and permissions, then read again", e);
        }
    }

    /**
     * Closes and deletes sealed log {@code id}'s local file, which the cache evicts: its upload is
     * confirmed, so later reads go to its object. Takes the relocation lock exclusively, so no read
     * of the file is in flight. False if the log must stay (active, not confirmed, or the store closed).
     */
    private boolean evictLocalLog(int id) {
        relocation.writeLock().lock();
        try {
            if (closed || id >= compactableBelow() || !archive.isUploaded(id)) {
                return false;
            }
            DataLog old = logs.remove(id);
            if (old != null) {
                closeQuietly(old);
            }
            DataLog.deleteFile(logPath(id));
            return true;
        } finally {
            relocation.writeLock().unlock();
        }
    }

    /** The sealed local logs whose upload is confirmed (cache entries from the start), oldest first by modification time. */
    private Map<Integer, Long> uploadedLocalLogs() {
        record Local(int id, long size, long modified) {
        }
        java.util.List<Local> found = new java.util.ArrayList<>();
        int below = compactableBelow();
        try (Stream<Path> s = Files.list(settings.dir())) {
            for (Path p : s.toList()) {
                int id = DataLog.parseId(p.getFileName().toString());
                if (id >= 0 && id < below && archive.isUploaded(id)) {
                    found.add(new Local(id, Files.size(p), Files.getLastModifiedTime(p).toMillis()));
                }
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, settings.dir().toString(), null, e);
        }
        found.sort(java.util.Comparator.comparingLong(Local::modified).thenComparingInt(Local::id));
        Map<Integer, Long> out = new java.util.LinkedHashMap<>();
        for (Local l : found) {
            out.put(l.id(), l.size());
        }
        return out;
    }

    /**
     * Seals the active log if it holds any record, and makes that durable: every block appended
     * before the call then lies in a sealed log, which backend s3 uploads. A catalog backup calls it
     * after its copy, so that the bucket holds every block the backup names (a new disk restores from
     * the bucket alone). Returns the active log's id afterwards: every log below it is sealed.
     */
    public int sealActiveLog() {
        refuseIfReadOnly("seal the active log");
        synchronized (appendLock) {
            ensureOpen();
            // no reserve charge for the new log's header: a catalog backup must not fail on a full data disk
            if (active.size() > DATA_LOG_HEADER_BYTES) {
                roll();
            }
        }
        sync(); // the durable point moves into the new log, so the sealed ones are final and go to the archive
        synchronized (appendLock) {
            return active.id();
        }
    }

    private void roll() {
        active.seal();
        if (settings.fsync().forces()) {
            active.force();
        }
        DataLog next = DataLog.create(settings.dir(), active.id() + 1, System.currentTimeMillis());
        logs.put(next.id(), next);
        active = next;
    }

    /**
     * At an orderly close, after the last sync: hands the PBNs reserved but never given out back, so
     * the next start continues at {@link #nextPbn} and PBNs stay dense (the GC's per-PBN tables span
     * the highest PBN). Only a crash leaves a gap, as it must: PBNs handed out before it are never
     * reused.
     */
    private void releaseReservation() {
        synchronized (appendLock) {
            if (!readOnly && nextPbn < reservedPbn) {
                reserve(nextPbn);
            }
        }
    }

    /** A reservation covering PBNs below {@code needed} plus a batch, never past the range's limit. */
    private long reservationEnd(long needed) {
        return needed > range.limit() - settings.pbnReserveBatch() ? range.limit() : needed + settings.pbnReserveBatch();
    }

    private void reserve(long upTo) {
        try (MetadataBatch batch = new MetadataBatch()) {
            db.putMetaLong(batch, FormatVersions.META_PBN_RESERVED, upTo);
            db.write(batch, true);
        }
        reservedPbn = upTo;
    }

    private void writeDurablePoint(int logId, long length, MetadataBatch batch) {
        if (batch == null) {
            try (MetadataBatch b = new MetadataBatch()) {
                new DurablePoint(logId, length).write(db, b);
            }
        } else {
            new DurablePoint(logId, length).write(db, batch);
        }
    }
}
