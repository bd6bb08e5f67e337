package org.holdfast.server.ingest;

import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.store.BlockHome;

/**
 * Teaches the dedup engine a session's input segments ({@link DedupStream#record}) once their blocks
 * are durable: at a checkpoint, at COMMIT, and (complete segments only) at abandonment. With data on
 * workers each entry goes with the worker that holds its PBN. Session lane only; no allocation per segment.
 */
final class SegmentRecorder {
    private final SessionEntries entries;
    private final DedupDomain domain;
    private final BlockHome blocks;
    private final SegmentScratch scratch;

    /** Records the segments of {@code entries}, under {@code domain}'s keys, of blocks in {@code blocks}. */
    SegmentRecorder(SessionEntries entries, DedupDomain domain, BlockHome blocks, SegmentScratch scratch) {
        this.entries = entries;
        this.domain = domain;
        this.blocks = blocks;
        this.scratch = scratch;
    }

    /**
     * Teaches {@code into} segments {@code [0, upTo)}. With {@code onlyComplete}, a segment with an
     * entry whose PBN is not known yet is skipped; without, it is a bug (every one must be resolved).
     */
    void record(DedupStream into, int upTo, boolean onlyComplete) {
        SessionEntries e = entries;
        byte[] segFps = scratch.keys();
        long[] segPbns = scratch.pbns();
        boolean[] segNew = scratch.isNew();
        long[] segWorkers = scratch.workers();
        for (int s = 0; s < upTo; s++) {
            int from = e.segStart[s];
            int len = e.segLen[s];
            boolean complete = true;
            for (int j = 0; j < len; j++) {
                int idx = from + j;
                byte st = e.state[idx];
                boolean ownerResolved = st == SessionEntries.FOLLOWS && e.state[e.owner[idx]] == SessionEntries.RESOLVED;
                if (st == SessionEntries.AWAITING || st == SessionEntries.STORING || (st == SessionEntries.FOLLOWS && !ownerResolved)) {
                    complete = false;
                    break;
                }
                segPbns[j] = ownerResolved ? e.pbns[e.owner[idx]] : e.pbns[idx];
                segNew[j] = e.isNew[idx];
            }
            if (!complete) {
                if (onlyComplete) {
                    continue;
                }
                throw new IllegalStateException("segment " + s + " is unresolved at commit");
            }
            domain.keys(e.fps, from * Fingerprint.BYTES, segFps, 0, len);
            if (!blocks.keepsBlocksOnWorkers()) {
                // blocks on this node: any worker may learn any PBN, so a record that places again (a
                // worker lost since the lookup) still teaches the workers up what the session stored
                into.record(segFps, len, segPbns, segNew);
                continue;
            }
            // where the blocks are (a follower: its owner's worker): a record that has to place again,
            // or runs on another stream, must send no entry to a worker whose range does not hold its PBN
            for (int j = 0; j < len; j++) {
                int idx = from + j;
                segWorkers[j] = e.storingWorker[e.state[idx] == SessionEntries.FOLLOWS ? e.owner[idx] : idx];
            }
            into.record(segFps, len, segPbns, segNew, segWorkers);
        }
    }
}
