package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.PbnRange;

/**
 * The read path of a {@link DataStore}: locating a PBN (pending appends first, then the location
 * index), reading its record from the log's file or object, and checking it (record header, CRC32C,
 * a frame member's SHA-256); a record that fails is marked bad. Locks are the store's: reads hold
 * the shared side of {@code relocation}, and the pending locations are read under its append lock.
 */
final class BlockReads {
    private static final System.Logger LOG = System.getLogger(DataStore.class.getName());
    // changes whenever a record offset may come to name another record (a compaction's switch, a dropped
    // log, another store instance), so that a reader's cached decoded frame is never taken for a newer one
    private static final AtomicLong EPOCHS = new AtomicLong();

    private final Path dir;
    private final PbnRange range;
    private final MetadataDb db;
    private final LocationIndex locations;
    private final BadBlocks badBlocks;
    private final MissingLogSweep missingLogs;
    private final OpenLogs logs;
    /** Backend s3: where a log whose local file is gone is read from; null for a local store. */
    private final LogArchive archive;
    private final ReentrantReadWriteLock relocation;
    private final Object appendLock;
    // guarded by appendLock (the store appends to it)
    private final UnindexedLocations pending;
    // data-log regions (one positional read each) read for callers, for the restore speed factor
    private final AtomicLong regionsRead = new AtomicLong();
    private volatile long epoch = EPOCHS.incrementAndGet();
    // zstd contexts for decoding frames in read(), borrowed per frame and closed with the store
    private final ConcurrentLinkedQueue<BlockCodec> codecs = new ConcurrentLinkedQueue<>();

    BlockReads(Path dir, PbnRange range, MetadataDb db, LocationIndex locations, BadBlocks badBlocks, MissingLogSweep missingLogs,
            OpenLogs logs, LogArchive archive, ReentrantReadWriteLock relocation, Object appendLock, UnindexedLocations pending) {
        this.dir = dir;
        this.range = range;
        this.db = db;
        this.locations = locations;
        this.badBlocks = badBlocks;
        this.missingLogs = missingLogs;
        this.logs = logs;
        this.archive = archive;
        this.relocation = relocation;
        this.appendLock = appendLock;
        this.pending = pending;
    }

    /** Offsets in some log now name other records (a compaction's switch, a dropped log): cached frames are stale. Under the exclusive relocation lock. */
    void newEpoch() {
        epoch = EPOCHS.incrementAndGet();
    }

    /** Data-log regions read so far (see {@link DataStore#regionsRead}). */
    long regionsRead() {
        return regionsRead.get();
    }

    /** Closes the zstd contexts; at the store's close, under its locks. */
    void closeCodecs() {
        for (BlockCodec c = codecs.poll(); c != null; c = codecs.poll()) {
            c.close();
        }
    }

    /** Marks {@code pbn} bad and answers the failure that names it; called where a record fails its check. */
    CorruptBlockException corruptBlock(String file, long pbn, long offset, String problem, byte[] fps, int fpOff) {
        try {
            badBlocks.mark(pbn, fps, fpOff, file, problem + " (record at offset " + offset + ")");
        } catch (StoreException e) {
            LOG.log(Level.WARNING, "cannot record PBN " + pbn + " as bad: " + e.getMessage());
        }
        return new CorruptBlockException(file, pbn, offset, problem);
    }

    /**
     * Reads block {@code pbn} as stored into {@code into}, checking its record header and CRC32C. A
     * member of a frame comes decoded (codec raw) and checked against its fingerprint too, so a read
     * never yields other bytes than the block's.
     *
     * @throws CorruptDataException if the PBN has no location or its record fails a check
     */
    void read(long pbn, StoredBlock into) {
        if (pbn <= 0) {
            throw new IllegalArgumentException("PBN " + pbn + " is not a stored block");
        }
        StoreRange.requireIn(range, pbn, "read", dir);
        relocation.readLock().lock();
        try {
            readLocked(pbn, into);
        } finally {
            relocation.readLock().unlock();
        }
    }

    private void readLocked(long pbn, StoredBlock into) {
        if (!locate(pbn, into)) {
            throw new BlockNotStoredException(dir.toString(), pbn);
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
    int readBatch(long[] pbns, int from, int n, BlockBatch into) {
        into.count = 0;
        int m = Math.min(n, into.capacity());
        if (m <= 0) {
            return 0;
        }
        for (int i = 0; i < m; i++) {
            if (pbns[from + i] <= 0) {
                throw new IllegalArgumentException("PBN " + pbns[from + i] + " is not a stored block");
            }
            StoreRange.requireIn(range, pbns[from + i], "read", dir);
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
                throw new BlockNotStoredException(dir.toString(), pbns[from + missing]);
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
                throw corruptBlock(logs.path(into.logId[b]).toString(), into.pbn[b], into.offset[b], "the frame record does not hold this PBN",
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
    void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch) {
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

    boolean locate(long pbn, StoredBlock into) {
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

    /**
     * The reader of log {@code id}: its local file, else (backend s3) the cached ranges of its object.
     * A log that exists nowhere (lost with a disk, or absent after a catalog restore) marks every block
     * it held bad ({@link MissingLogSweep}, once per log), so the damage is recorded the first time anyone
     * meets it and the next backup holding each block's content repairs it; {@code fps[fpOff..+32)} is
     * {@code pbn}'s fingerprint.
     */
    LogReader log(int id, long pbn, long offset, byte[] fps, int fpOff) {
        DataLog l = logs.get(id);
        if (l != null) {
            if (archive != null) {
                archive.cache().touchLog(id);
            }
            return l;
        }
        if (archive != null && !Files.exists(logs.path(id))) {
            LogReader remote = archive.remote(id);
            if (remote != null) {
                return remote; // fetched outside the append lock: a GET must not stall ingest
            }
        }
        DataLog opened;
        synchronized (appendLock) {
            logs.ensureOpen();
            opened = logs.openIfPresent(id);
        }
        if (opened == null) {
            // marked outside the append lock: the marks are synced writes
            missingLogs.sweep(id);
            throw corruptBlock(logs.path(id).toString(), pbn, offset, "data log is missing", fps, fpOff);
        }
        if (archive != null) {
            archive.cache().touchLog(id);
        }
        return opened;
    }
}
