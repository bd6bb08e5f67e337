package org.holdfast.server.ingest;

import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.engine.DedupStream;

/**
 * The lookup of a session's input segments in the dedup engine ({@link DedupStream#lookup}) and what
 * it decides for each entry: a hit whose possession tag matches the stored pf is a duplicate
 * (resolved, and protected from the sweep); a hit without that proof is asked for with the PBN kept as
 * its candidate; a hit on a bad block is asked for to repair it; a miss, or a hit a sweep is
 * reclaiming, is asked for (or follows this session's earlier request of the same fingerprint).
 * See {@link BackupSession} for the rules. Session lane only; no allocation per segment.
 */
final class InputSegmentLookup {
    private final long session;
    private final SessionEntries entries;
    private final DedupStream stream;
    private final DedupDomain domain;
    private final PossessionProof proof;
    private final IngestServices services;
    private final SegmentScratch scratch;
    private final byte[] segPfs;
    private final boolean[] segPfFound;
    private final byte[] pfKey = new byte[8];
    private final byte[] pfValue = new byte[org.holdfast.server.store.PossessionIndex.WITH_KEY_BYTES];
    private final long[] protect;
    private final int[] protectIdx;
    private long unproven;

    /** Looks up the segments of {@code entries} (session {@code session}) on {@code stream}, checking tags with {@code proof}. */
    InputSegmentLookup(long session, SessionEntries entries, DedupStream stream, DedupDomain domain, PossessionProof proof,
                       IngestServices services, SegmentScratch scratch, int segmentMax) {
        this.session = session;
        this.entries = entries;
        this.stream = stream;
        this.domain = domain;
        this.proof = proof;
        this.services = services;
        this.scratch = scratch;
        this.segPfs = new byte[segmentMax * PossessionProof.PF_BYTES];
        this.segPfFound = new boolean[segmentMax];
        this.protect = new long[Math.max(segmentMax, ProtocolLimits.MAX_BLOCKS_PER_FRAME)];
        this.protectIdx = new int[segmentMax];
    }

    /** Entries the engine matched whose possession was not proven (asked for instead). */
    long unproven() {
        return unproven;
    }

    /** Looks up segment {@code s}, setting in {@code bitmap} (the NEED of the run from {@code runStart}) each entry asked for. */
    void lookup(int s, long runStart, byte[] bitmap) {
        SessionEntries e = entries;
        int from = e.segStart[s];
        int len = e.segLen[s];
        byte[] segFps = scratch.keys();
        long[] segPbns = scratch.pbns();
        long[] segWorkers = scratch.workers();
        domain.keys(e.fps, from * Fingerprint.BYTES, segFps, 0, len);
        stream.lookup(segFps, len, segPbns);
        stream.storingWorkers(len, segWorkers);
        System.arraycopy(segWorkers, 0, e.storingWorker, from, len);
        services.dataStore().possession().pfs(segPbns, len, segPfs, segPfFound, pfKey, pfValue);
        int protectedCount = 0;
        for (int j = 0; j < len; j++) {
            int idx = from + j;
            long found = segPbns[j];
            if (found != 0) {
                protectIdx[protectedCount] = idx;
                protect[protectedCount++] = found;
                if (services.dataStore().badBlocks().isBad(found)) {
                    // never a duplicate of a bad block: ask for the payload, which then repairs the block in place
                    e.repair[idx] = found;
                    askFor(idx, runStart, bitmap);
                    continue;
                }
                if (segPfFound[j] && proof.tag(segPfs, j * PossessionProof.PF_BYTES) == e.tags[idx]) {
                    e.state[idx] = SessionEntries.RESOLVED;
                    e.pbns[idx] = found;
                } else {
                    // not proven: ask for the payload; once it proves the content, refer to this PBN
                    e.candidate[idx] = found;
                    unproven++;
                    askFor(idx, runStart, bitmap);
                }
                continue;
            }
            askFor(idx, runStart, bitmap);
        }
        if (protectedCount > 0 && services.referenceGuard().protectOrRefuse(session, protect, 0, protectedCount) > 0) {
            // a concurrent sweep is reclaiming some matched blocks: treat them as misses and store them anew
            for (int k = 0; k < protectedCount; k++) {
                if (protect[k] == 0) {
                    int idx = protectIdx[k];
                    if (e.repair[idx] != 0) {
                        e.repair[idx] = 0; // already asked for; it will be stored anew
                    } else if (e.candidate[idx] != 0) {
                        e.candidate[idx] = 0; // already asked for; it will be stored anew
                    } else {
                        askFor(idx, runStart, bitmap);
                    }
                }
            }
        }
    }

    /** No usable stored copy of entry {@code idx}: follow an earlier request of the same block, or ask the agent. */
    private void askFor(int idx, long runStart, byte[] bitmap) {
        if (entries.ask(idx)) {
            Need.set(bitmap, (int) (entries.lbns[idx] - runStart));
        }
    }
}
