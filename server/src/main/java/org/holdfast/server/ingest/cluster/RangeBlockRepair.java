package org.holdfast.server.ingest.cluster;

import java.util.Arrays;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.DataFailed;
import org.holdfast.common.protocol.DataRepair;
import org.holdfast.common.protocol.DataStored;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.StoredBlock;

/**
 * The worker's end of DATA_REPAIR (data on workers): repairs a damaged block of its range in place with
 * the master's verified upload, through its range store's {@link DataStore#repair} (the new record
 * becomes the PBN's location, and the worker's own bad mark goes, at the next DATA_SYNC; a crash before
 * it leaves the old, damaged copy and its mark). The worker trusts neither the master's mark nor its
 * upload: the caller has hashed the upload against its fingerprint, and here the PBN must lie in the
 * range, be held with that fingerprint, and fail its check when read now. A PBN that reads sound with
 * that fingerprint is answered as repaired with nothing written (an earlier repair whose commit the
 * master did not see through), so the master may clear its mark. Anything else is refused, nothing
 * changed. Runs on the data lane's thread only.
 */
final class RangeBlockRepair {
    private static final System.Logger LOG = System.getLogger(RangeBlockRepair.class.getName());
    private static final byte[] ZERO_FP = new byte[Fingerprint.BYTES];
    private final PbnRange range;
    private final StoredBlock block = new StoredBlock();
    private byte[] raw = new byte[0]; // grown to the largest block checked: repairs are rare, most links never need it
    private final byte[] digest = new byte[Fingerprint.BYTES];

    /** Repairs in {@code range}, the range of this link's registration. */
    RangeBlockRepair(PbnRange range) {
        this.range = range;
    }

    /** Repairs {@code r.pbn()} in {@code store} with {@code r}'s upload, checked by the caller; DATA_STORED or DATA_FAILED. */
    Message repair(DataStore store, DataRepair r, BlockCodec codec) {
        long pbn = r.pbn();
        if (!range.contains(pbn)) {
            return refuse(r, "PBN " + pbn + " is outside this worker's range " + range + "; the worker that owns it repairs it");
        }
        if (!store.fingerprint(pbn, block)) {
            return refuse(r, "this worker holds no block PBN " + pbn + " (never stored here, or freed by GC)");
        }
        if (!Arrays.equals(block.fingerprint(), 0, Fingerprint.BYTES, r.fp(), 0, Fingerprint.BYTES)) {
            return refuse(r, "PBN " + pbn + " holds another fingerprint than the upload's");
        }
        if (!store.badBlocks().isBad(pbn)) {
            String problem = problem(store, pbn, codec);
            if (problem == null) {
                LOG.log(System.Logger.Level.INFO, "DATA_REPAIR of PBN {0}: the block reads sound here; nothing written",
                        Long.toString(pbn));
                return new DataStored(r.requestId(), pbn, 1);
            }
            // damage the record check does not see (its bytes decode to other content): marked here so repair takes it
            store.markDamaged(pbn, problem + ", found by a repair");
        }
        int stored = r.codec() == PayloadCodec.ZSTD ? FormatVersions.CODEC_ZSTD : FormatVersions.CODEC_RAW;
        if (!store.repair(pbn, r.fp(), 0, r.stored(), 0, r.stored().length, stored, r.blockSize())) {
            return refuse(r, "the range store would not repair PBN " + pbn);
        }
        return new DataStored(r.requestId(), pbn, 1);
    }

    /** Why block {@code pbn} is damaged as read now, or null if it is sound: its record's check, then its content's hash. */
    private String problem(DataStore store, long pbn, BlockCodec codec) {
        try {
            store.read(pbn, block); // a record that fails its check is marked bad by the store
        } catch (CorruptDataException e) {
            return e.getMessage();
        }
        int n = block.rawLength();
        if (raw.length < n) {
            raw = new byte[n];
        }
        try {
            codec.decode(block.codec() == FormatVersions.CODEC_ZSTD ? PayloadCodec.ZSTD : PayloadCodec.RAW, block.data(),
                    block.dataOffset(), block.storedLength(), raw, 0, n);
        } catch (CorruptPayloadException e) {
            return "its stored bytes do not decode (" + e.getMessage() + ")";
        }
        BlockHasher.forCurrentThread().sha256(raw, 0, n, digest, 0);
        byte[] fp = block.fingerprint();
        if (Arrays.equals(digest, 0, Fingerprint.BYTES, fp, 0, Fingerprint.BYTES)
                || Arrays.equals(ZERO_FP, 0, Fingerprint.BYTES, fp, 0, Fingerprint.BYTES) && ZeroBlocks.isZero(raw, 0, n)) {
            return null;
        }
        return "its bytes do not hash to its fingerprint (SHA-256)";
    }

    private static Message refuse(DataRepair r, String why) {
        return DataFailed.of(r.requestId(), "DATA_REPAIR refused: " + why + "; nothing changed");
    }
}
