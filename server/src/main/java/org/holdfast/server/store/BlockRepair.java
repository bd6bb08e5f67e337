package org.holdfast.server.store;

import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.PbnRange;

/**
 * Repair of a {@link DataStore}'s bad blocks in place ("Repair protocol" in docs/architecture.md): a
 * verified copy is appended for the same PBN and kept here until the sync switches the PBN's
 * location to it and drops its bad mark, in the durable point's batch; and marking a block damaged.
 * The locks are the store's: the pending repairs are guarded by its append lock.
 */
final class BlockRepair {
    private static final System.Logger LOG = System.getLogger(DataStore.class.getName());

    private final Path dir;
    private final PbnRange range;
    private final LocationIndex locations;
    private final BadBlocks badBlocks;
    private final OpenLogs logs;
    private final BlockReads reads;
    private final ActiveLog active;
    private final Object appendLock;
    private final AtomicLong repairedBlocks = new AtomicLong();
    // guarded by appendLock: repairs appended since the last sync, new copies of bad PBNs
    private final UnindexedLocations repairs = new UnindexedLocations(16, false);

    BlockRepair(Path dir, PbnRange range, LocationIndex locations, BadBlocks badBlocks, OpenLogs logs, BlockReads reads,
            ActiveLog active, Object appendLock) {
        this.dir = dir;
        this.range = range;
        this.locations = locations;
        this.badBlocks = badBlocks;
        this.logs = logs;
        this.reads = reads;
        this.active = active;
        this.appendLock = appendLock;
    }

    /** Bad blocks repaired in place since the store opened. */
    long repairedBlocks() {
        return repairedBlocks.get();
    }

    /** See {@link DataStore#repair}. */
    boolean repair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        if (pbn > 0) {
            StoreRange.requireIn(range, pbn, "repair", dir);
        }
        if (pbn <= 0 || !badBlocks.isBad(pbn)) {
            return false;
        }
        StoredBlock current = new StoredBlock(1);
        if (!reads.locate(pbn, current)
                || !Arrays.equals(current.fingerprint, 0, Fingerprint.BYTES, fps, fpOff, fpOff + Fingerprint.BYTES)) {
            LOG.log(Level.WARNING, "not repairing bad block PBN {0}: the upload's fingerprint differs from the one it must hold", pbn);
            return false;
        }
        if (!FormatVersions.isStoredCodec(codec) || storedLength <= 0 || storedLength > FormatVersions.MAX_STORED_BYTES
                || rawLength <= 0 || rawLength > FormatVersions.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("cannot repair with codec " + codec + ", stored length " + storedLength + ", raw length " + rawLength);
        }
        synchronized (appendLock) {
            logs.ensureOpen();
            active.appendRepair(pbn, fps, fpOff, payload, off, storedLength, codec, rawLength, repairs);
        }
        LOG.log(Level.INFO, "repairing bad block PBN {0} with an uploaded copy of the same fingerprint", pbn);
        return true;
    }

    /** See {@link DataStore#markDamaged}. */
    boolean markDamaged(long pbn, String problem) {
        if (pbn > 0) {
            StoreRange.requireIn(range, pbn, "mark damaged", dir);
        }
        StoredBlock at = new StoredBlock(1);
        if (pbn <= 0 || !reads.locate(pbn, at)) {
            return false;
        }
        return badBlocks.mark(pbn, at.fingerprint, 0, logs.path(at.logId).toString(), problem + " (record at offset " + at.offset + ")");
    }

    /**
     * In the sync, under the append lock: puts each pending repair's new location and the removal of
     * its bad mark into {@code batch} (the one that writes the durable point covering the copies),
     * empties the pending repairs and returns their PBNs for {@link #switched}.
     */
    long[] switchInto(MetadataBatch batch) {
        long[] repaired = new long[repairs.size()];
        for (int i = 0; i < repaired.length; i++) {
            repaired[i] = repairs.pbn(i);
            if (badBlocks.isBad(repaired[i])) {
                repairs.putTo(locations, batch, i);
                badBlocks.clear(batch, repaired[i]);
            }
        }
        repairs.clear();
        return repaired;
    }

    /** After the sync's batch is written: the PBNs {@link #switchInto} returned name their new copies. */
    void switched(long[] repaired) {
        for (long p : repaired) {
            if (badBlocks.isBad(p)) {
                badBlocks.cleared(p);
                repairedBlocks.incrementAndGet();
                LOG.log(Level.INFO, "repaired bad block PBN {0}: its location now names a verified new copy", p);
            }
        }
    }
}
