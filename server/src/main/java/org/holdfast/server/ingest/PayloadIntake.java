package org.holdfast.server.ingest;

import java.util.Arrays;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.StoredBlock;

/**
 * A session's intake of BLOCKS: each payload must answer a request of the session and hash to the
 * fingerprint sent for its LBN, or nothing of it (of a compressed frame: of the whole frame) is
 * stored. A verified payload then proves its candidate PBN (no second copy), repairs a bad block
 * ({@link RepairTarget}), or is stored as a new block through the {@link StoreWindow}; every
 * block stored or proven goes to {@link ProvenBlocks}. Owns the session's codec. Session lane only;
 * the scratch buffers are reused for every frame.
 */
final class PayloadIntake implements AutoCloseable {
    private final int blockSize;
    private final IngestServices services;
    private final BlockHome blocks;
    private final SessionEntries entries;
    private final ProvenBlocks proven;
    private final RepairTarget repairTarget;
    private final StoreWindow window;
    private final BlockCodec codec = new BlockCodec();
    private final BlockHasher hasher = new BlockHasher();
    private final byte[] payload = new byte[ProtocolLimits.MAX_PAYLOAD];
    private final byte[] raw;
    private byte[] frameRaw; // made on first need: most sessions let the digest pool decode their frames
    // the entry index and fingerprint of each member of the frame being checked, in member order
    private final int[] frameIdx = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
    private final byte[] frameFps = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME * Fingerprint.BYTES];
    private final long[] pfScratch = new long[2];
    private final StoredBlock candidateScratch = new StoredBlock();
    private long sentBlocks;
    private long newBlocks;
    private long storedBytes;
    private long repaired;

    /** The intake of session {@code session}'s {@code entries}, storing blocks of {@code blockSize} bytes in {@code blocks}. */
    PayloadIntake(long session, int blockSize, IngestServices services, BlockHome blocks, SessionEntries entries, ProvenBlocks proven,
                  RepairTarget repairTarget) {
        this.blockSize = blockSize;
        this.services = services;
        this.blocks = blocks;
        this.entries = entries;
        this.proven = proven;
        this.repairTarget = repairTarget;
        this.window = new StoreWindow(blocks, this::landed, services.referenceGuard(), session);
        this.raw = new byte[blockSize];
    }

    /** This session's appends of new blocks that may still wait for their PBNs. */
    StoreWindow window() {
        return window;
    }

    /** Blocks whose payload came and was verified (stored, repaired or proven). */
    long sentBlocks() {
        return sentBlocks;
    }

    /** Blocks stored: new ones and repairs. */
    long newBlocks() {
        return newBlocks;
    }

    /** Payload bytes stored, as stored (compressed or not). */
    long storedBytes() {
        return storedBytes;
    }

    /** Bad blocks repaired by an upload. */
    long repaired() {
        return repaired;
    }

    /** Verifies and stores the payloads of one BLOCKS frame, decoding and hashing them on this thread. */
    void onBlocks(Blocks b) {
        PayloadDigester.FrameDigests d = new PayloadDigester.FrameDigests(b.count());
        PayloadDigester.digestInline(b, blockSize, 0, b.count(), d, codec, hasher, payload, hasFrame(b) ? frameRaw() : raw, pfScratch);
        onBlocks(b, d);
    }

    /**
     * Verifies and stores the payloads of one BLOCKS frame whose payloads {@link PayloadDigester}
     * already decoded and hashed: each digest must equal the fingerprint sent for its LBN in ENTRIES.
     */
    void onBlocks(Blocks b, PayloadDigester.FrameDigests d) {
        SessionEntries e = entries;
        for (int i = 0; i < b.count(); i++) {
            if (b.codecs()[i] == PayloadCodec.ZSTD_FRAME) {
                int m = b.frameMembers(i);
                onFrame(b, d, i, m);
                i += m - 1;
                continue;
            }
            long lbn = b.lbns()[i];
            int idx = e.awaitedEntry(lbn);
            if (idx < 0) {
                throw new ProtocolException(ErrorCode.BAD_STATE, "BLOCKS carries LBN " + lbn + ", which the server did not ask for or already has");
            }
            ProtocolException bad = d.errorAt(i);
            if (bad != null) {
                throw bad;
            }
            int c = b.codecs()[i];
            int fpOff = idx * Fingerprint.BYTES;
            if (!Arrays.equals(d.digests, i * Fingerprint.BYTES, (i + 1) * Fingerprint.BYTES, e.fps, fpOff, fpOff + Fingerprint.BYTES)) {
                throw new ProtocolException(ErrorCode.FINGERPRINT_MISMATCH, "payload of LBN " + lbn
                        + " does not hash to the fingerprint sent for it in ENTRIES; the session is aborted and nothing is stored");
            }
            if (provenCandidate(idx, d.pfs, i * PossessionProof.PF_BYTES)) {
                continue;
            }
            int len = b.copyPayload(i, payload, 0);
            int storedCodec = c == PayloadCodec.ZSTD ? FormatVersions.CODEC_ZSTD : FormatVersions.CODEC_RAW;
            // Stored exactly as received; restore passes the same bytes back. The agent already tried
            // zstd on a raw payload (it sends raw only when zstd does not pay), so trying again here
            // would cost a compression per incompressible block for nothing.
            store(idx, payload, 0, len, storedCodec, d.pfs, i * PossessionProof.PF_BYTES);
        }
        // what the workers answered meanwhile, protected in one call as before the window; the rest lands later
        window.landAnswered();
        window.protectLanded();
    }

    @Override
    public void close() {
        codec.close();
    }

    private static boolean hasFrame(Blocks b) {
        for (int i = 0; i < b.count(); i++) {
            if (b.codecs()[i] == PayloadCodec.ZSTD_FRAME) {
                return true;
            }
        }
        return false;
    }

    /** Scratch for one decoded compressed frame (up to 1 MiB), made on the first frame a session needs to decode here. */
    private byte[] frameRaw() {
        if (frameRaw == null) {
            frameRaw = new byte[ProtocolLimits.FRAME_MAX_RAW];
        }
        return frameRaw;
    }

    /**
     * The compressed frame of blocks {@code [i, i + m)}: every member must have been asked for and
     * hash to its fingerprint, or the whole frame is refused before anything of it is stored. A
     * frame of plain new blocks is stored as it came, as one frame; one with a member that proves a
     * stored candidate or repairs a bad block takes the per-block path, member by member.
     */
    private void onFrame(Blocks b, PayloadDigester.FrameDigests d, int i, int m) {
        SessionEntries e = entries;
        long first = b.lbns()[i];
        boolean plain = true;
        for (int k = 0; k < m; k++) {
            long lbn = b.lbns()[i + k];
            int idx = e.awaitedEntry(lbn);
            if (idx < 0 || (k > 0 && lbn <= b.lbns()[i + k - 1])) {
                throw new ProtocolException(ErrorCode.BAD_STATE, "BLOCKS carries LBN " + lbn + " in the zstd frame of LBN " + first
                        + ", which the server did not ask for, already has or got twice; the whole frame is refused and nothing of it is stored");
            }
            frameIdx[k] = idx;
            plain &= e.candidate[idx] == 0 && e.repair[idx] == 0;
        }
        ProtocolException bad = d.errorAt(i);
        if (bad != null) {
            throw bad;
        }
        for (int k = 0; k < m; k++) {
            int fpOff = frameIdx[k] * Fingerprint.BYTES;
            int at = (i + k) * Fingerprint.BYTES;
            if (!Arrays.equals(d.digests, at, at + Fingerprint.BYTES, e.fps, fpOff, fpOff + Fingerprint.BYTES)) {
                throw new ProtocolException(ErrorCode.FINGERPRINT_MISMATCH, "block LBN " + b.lbns()[i + k] + " (member " + k
                        + " of the zstd frame of LBN " + first + ") does not hash to the fingerprint sent for it in ENTRIES; the whole"
                        + " frame is refused, nothing of it is stored, and the session is aborted");
            }
            System.arraycopy(e.fps, fpOff, frameFps, k * Fingerprint.BYTES, Fingerprint.BYTES);
        }
        var badBlocks = services.dataStore().badBlocks();
        for (int k = 0; plain && !badBlocks.isEmpty() && k < m; k++) {
            plain = badBlocks.holding(frameFps, k * Fingerprint.BYTES) == 0;
        }
        if (!plain) {
            onFrameMembers(b, d, i, m);
            return;
        }
        int len = b.copyPayload(i, payload, 0);
        long worker = e.storingWorker[frameIdx[0]];
        for (int k = 0; k < m; k++) {
            int idx = frameIdx[k];
            e.storingWorker[idx] = worker; // the whole frame is in the first member's worker's range: its index learns them all
            e.state[idx] = SessionEntries.STORING;
        }
        window.appendFrame(worker, frameFps, 0, m, payload, 0, len, blockSize, frameIdx, d.pfs, i * PossessionProof.PF_BYTES);
        storedBytes += len;
    }

    /**
     * The rare path of a verified frame: decodes it again here and handles each member like a single
     * block (proving a candidate, repairing a bad block, or stored alone, compressed at level 1).
     */
    private void onFrameMembers(Blocks b, PayloadDigester.FrameDigests d, int i, int m) {
        byte[] members = frameRaw();
        int len = b.copyPayload(i, payload, 0);
        codec.decompress(payload, 0, len, members, 0, m * blockSize);
        for (int k = 0; k < m; k++) {
            int idx = frameIdx[k];
            int pfOff = (i + k) * PossessionProof.PF_BYTES;
            if (provenCandidate(idx, d.pfs, pfOff)) {
                continue;
            }
            int n = codec.compress(members, k * blockSize, blockSize, payload, 0);
            if (n > 0) {
                store(idx, payload, 0, n, FormatVersions.CODEC_ZSTD, d.pfs, pfOff);
            } else {
                store(idx, members, k * blockSize, blockSize, FormatVersions.CODEC_RAW, d.pfs, pfOff);
            }
        }
    }

    /** If entry {@code idx}'s verified payload proves the content of its candidate PBN, refers to it and returns true. */
    private boolean provenCandidate(int idx, byte[] pfs, int pfOff) {
        int fpOff = idx * Fingerprint.BYTES;
        long held = entries.candidate[idx];
        if (held != 0 && blocks.fingerprint(held, candidateScratch)
                && Arrays.equals(candidateScratch.fingerprint(), 0, Fingerprint.BYTES, entries.fps, fpOff, fpOff + Fingerprint.BYTES)) {
            // The payload proves the content of a block already stored (and protected since the lookup).
            entries.answered(idx, held, false);
            sentBlocks++;
            proven.add(held, pfs, pfOff, entries.fps, fpOff);
            return true;
        }
        return false;
    }

    /** Stores entry {@code idx}'s verified payload: as the repair of a bad block, else as a new block. */
    private void store(int idx, byte[] src, int off, int len, int storedCodec, byte[] pfs, int pfOff) {
        int fpOff = idx * Fingerprint.BYTES;
        long target = repairTarget.of(idx, fpOff);
        // in the store that holds the block: the master's own, or (data on workers) its worker's, whose mark goes after the commit
        if (target != 0 && blocks.repair(target, entries.fps, fpOff, src, off, len, storedCodec, blockSize)) {
            // The verified payload becomes the bad PBN's new copy (at the next sync): every snapshot referencing it heals.
            resolveStored(idx, target, false);
            storedBytes += len;
            repaired++;
            proven.add(target, pfs, pfOff, entries.fps, fpOff);
            return;
        }
        entries.state[idx] = SessionEntries.STORING;
        window.append(entries.storingWorker[idx], entries.fps, fpOff, src, off, len, storedCodec, blockSize, idx, pfs, pfOff);
        storedBytes += len;
    }

    /** A new block of entry {@code idx} is stored at {@code pbn} (its store landed: {@link StoreWindow}). */
    private void landed(int idx, long pbn, byte[] pfs, int pfOff) {
        resolveStored(idx, pbn, true);
        proven.add(pbn, pfs, pfOff, entries.fps, idx * Fingerprint.BYTES);
    }

    /** Entry {@code idx} got its payload stored at {@code pbn}: a new block, or ({@code fresh} false) a repaired one. */
    private void resolveStored(int idx, long pbn, boolean fresh) {
        entries.answered(idx, pbn, fresh);
        sentBlocks++;
        newBlocks++;
    }
}
