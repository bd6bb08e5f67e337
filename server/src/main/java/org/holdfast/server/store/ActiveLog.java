package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;
import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.kill.KillPoints;

/**
 * The append path of a {@link DataStore}: the active data log, the records written to it (blocks,
 * frames, repair copies) with their locations kept unindexed until the sync, and the roll to a new
 * log. The locks are the store's: appends hold its append lock, under which the sync reads
 * {@link #log()} and the pending locations.
 */
final class ActiveLog {
    /** Room above GC's floor {@link #sealForCompaction} wants: a new log's header, with a margin. */
    private static final long SEAL_ROOM = 1L << 16;

    private final DataStore.Settings settings;
    private final SpaceReserve reserve;
    private final OpenLogs logs;
    private final Object appendLock;
    private final AtomicLong appendedBlocks = new AtomicLong();
    private final AtomicLong appendedBytes = new AtomicLong();

    // guarded by appendLock
    private volatile DataLog active;
    private final PbnReservation pbnReservation;
    private final UnindexedLocations pending;
    private final byte[] recordBuf = new byte[RECORD_HEADER_BYTES + FormatVersions.MAX_STORED_BYTES];
    private final ByteBuffer recordView = ByteBuffer.wrap(recordBuf);
    private final CRC32C crc = new CRC32C();

    /** Appends to {@code active} (recovery opened it); appended locations go to {@code pending}. */
    ActiveLog(DataStore.Settings settings, DataLog active, SpaceReserve reserve, OpenLogs logs, PbnReservation pbnReservation,
            Object appendLock, UnindexedLocations pending) {
        this.settings = settings;
        this.active = active;
        this.reserve = reserve;
        this.logs = logs;
        this.pbnReservation = pbnReservation;
        this.appendLock = appendLock;
        this.pending = pending;
    }

    /** The active log; under the append lock unless a stale answer does no harm. */
    DataLog log() {
        return active;
    }

    /** Bytes appended but not yet written to the active log's file (read without the append lock). */
    long buffered() {
        return active.buffered();
    }

    long appendedBlocks() {
        return appendedBlocks.get();
    }

    long appendedBytes() {
        return appendedBytes.get();
    }

    /** See {@link DataStore#append}. */
    long append(byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
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
        logs.ensureWritable("append");
        synchronized (appendLock) {
            logs.ensureOpen();
            pbnReservation.requireRoom(1);
            makeRoom(recordLength, false);
            long pbn = pbnReservation.next();
            pbnReservation.cover(1);
            System.arraycopy(payload, off, recordBuf, RECORD_HEADER_BYTES, storedLength);
            RecordFormat.writeHeader(recordBuf, pbn, codec, rawLength, storedLength, crc);
            long at = appendRecord(recordLength, pbn);
            pending.add(pbn, active.id(), at, storedLength, fps, fpOff);
            pbnReservation.handedOutBelow(pbn + 1);
            appendedBlocks.incrementAndGet();
            appendedBytes.addAndGet(storedLength);
            return pbn;
        }
    }

    /** See {@link DataStore#appendFrame}. */
    long appendFrame(byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize) {
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
        logs.ensureWritable("append");
        synchronized (appendLock) {
            logs.ensureOpen();
            // a release that knows only block records then refuses the log instead of misreading it
            pbnReservation.requireRoom(members);
            makeRoom(recordLength, active.version() < FormatVersions.DATA_LOG_VERSION);
            long first = pbnReservation.next();
            pbnReservation.cover(members);
            System.arraycopy(frame, off, recordBuf, RECORD_HEADER_BYTES, storedLength);
            FrameFormat.writeHeader(recordBuf, 0, first, members, members * blockSize, storedLength, 0, crc);
            long at = appendRecord(recordLength, first);
            int location = FrameFormat.memberLocation(storedLength, members);
            for (int k = 0; k < members; k++) {
                pending.add(first + k, active.id(), at, location, fps, fpOff + k * Fingerprint.BYTES);
            }
            pbnReservation.handedOutBelow(first + members);
            appendedBlocks.addAndGet(members);
            appendedBytes.addAndGet(storedLength);
            return first;
        }
    }

    /**
     * Appends a new copy of bad block {@code pbn} (the caller checked it; see {@link BlockRepair})
     * and adds its location to {@code repairs}, which the next sync switches the PBN to. The caller
     * holds the append lock and checked that the store is open. Needs room for a new backup above
     * the reserve, but charges nothing to it.
     */
    void appendRepair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength,
            UnindexedLocations repairs) {
        int recordLength = RECORD_HEADER_BYTES + storedLength;
        reserve.require(DataStore.BEGIN_HEADROOM);
        if (full(recordLength)) {
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

    /**
     * Rolls away from active log {@code logId} for compaction (see {@link DataStore#sealActive});
     * false, changing nothing, if it is no longer the active log, holds no record, or GC lacks the
     * room for the new log.
     */
    boolean sealForCompaction(int logId) {
        synchronized (appendLock) {
            logs.ensureOpen();
            if (active.id() != logId || active.size() <= DATA_LOG_HEADER_BYTES) {
                return false;
            }
            if (reserve.gcRoom() < SEAL_ROOM) {
                return false; // a roll that cannot create the new log would leave the active log sealed under ingest
            }
            roll(); // not charged to the reserve, which is ingest's: GC may use it (one log header)
            reserve.invalidate();
            return true;
        }
    }

    /** Rolls to a new log if the active one holds any record (see {@link DataStore#sealActiveLog}). */
    void sealIfNotEmpty() {
        synchronized (appendLock) {
            logs.ensureOpen();
            // no reserve charge for the new log's header: a catalog backup must not fail on a full data disk
            if (active.size() > DATA_LOG_HEADER_BYTES) {
                roll();
            }
        }
    }

    /**
     * Charges the space reserve for a record of {@code recordLength} bytes and rolls to a new log if
     * it does not fit the active one (or {@code roll} says so). Under the append lock; before
     * anything changes, so a refused append leaves the store as it was.
     */
    private void makeRoom(int recordLength, boolean roll) {
        boolean rolls = roll || full(recordLength);
        reserve.charge(recordLength + (rolls ? DATA_LOG_HEADER_BYTES : 0));
        if (rolls) {
            roll();
        }
    }

    /** Whether a record of {@code recordLength} bytes would take the active log past the roll size (a log with no record takes any). */
    private boolean full(int recordLength) {
        return active.size() + recordLength > settings.rollBytes() && active.size() > DATA_LOG_HEADER_BYTES;
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

    /** Seals the active log (forced if the fsync policy says so) and starts the next one. Under the append lock. */
    private void roll() {
        active.seal();
        if (settings.fsync().forces()) {
            active.force();
        }
        DataLog next = DataLog.create(settings.dir(), active.id() + 1, System.currentTimeMillis());
        logs.put(next);
        active = next;
    }
}
