package org.holdfast.server.gc;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GcMetadataArray;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.gma.GmaLayout;

/**
 * The bookkeeping side of {@link WorkerFsck}, when the marks show the worker logged exactly the
 * deltas the file counts for it ({@link WorkerFsckReport.Marks#compared()}): compares a worker's GMA with the
 * counts file's records as they stream by in PBN order, a chunk at a time. A record's PBN and every
 * GMA slot no record names (RC and pins 0 by the catalog) are compared; an RC below the catalog's is
 * the dangerous side (a sweep could free a block a snapshot still needs), above it the leak side (a
 * block kept past its last reference). Expiries are not compared: the worker raises them itself
 * (the grace of backups in flight), so they legitimately differ from the catalog's.
 */
final class CountsComparison {
    private final GcMetadataArray gma;
    private final GmaLayout layout;
    private final long chunkLimit;
    private final boolean[] named = new boolean[GmaFormat.PBNS_PER_CHUNK + 1];
    private final WorkerFsckReport.Tally rcBelow = new WorkerFsckReport.Tally();
    private final WorkerFsckReport.Tally rcAbove = new WorkerFsckReport.Tally();
    private final WorkerFsckReport.Tally pinsDiffer = new WorkerFsckReport.Tally();
    private long current = -1; // the chunk the records are in now
    private GmaChunk chunk;

    /** Over {@code pipeline}'s GMA, every queued update committed. */
    CountsComparison(BoscPipeline pipeline) {
        this.gma = pipeline.gma();
        this.layout = pipeline.layout();
        this.chunkLimit = pipeline.chunkLimit();
    }

    /** The file's record of {@code pbn} (ascending from call to call). */
    void record(long pbn, int rc, int pins) {
        long ci = layout.chunkOf(pbn);
        if (ci != current) {
            moveTo(ci);
        }
        int slot = layout.slotOf(pbn);
        named[slot] = true;
        compare(chunk, slot, pbn, rc, pins);
    }

    /** Compares the slots after the last record. */
    void finish() {
        moveTo(Long.MAX_VALUE);
    }

    private void compare(GmaChunk c, int slot, long pbn, int rc, int pins) {
        boolean used = c.used(slot);
        int gmaRc = used ? c.rc(slot) : 0;
        int gmaPins = used ? c.pins(slot) : 0;
        if (gmaRc < rc) {
            rcBelow.add(pbn);
        } else if (gmaRc > rc) {
            rcAbove.add(pbn);
        }
        if (gmaPins != pins) {
            pinsDiffer.add(pbn);
        }
    }

    /** Finishes the current chunk (its slots no record named), every chunk between, and loads {@code ci}. */
    private void moveTo(long ci) {
        if (chunk != null) {
            unnamed(chunk);
        }
        for (long c = current + 1; c < Math.min(ci, chunkLimit); c++) {
            Arrays.fill(named, false);
            unnamed(load(c));
        }
        Arrays.fill(named, false);
        current = ci;
        chunk = ci == Long.MAX_VALUE ? null : load(ci);
    }

    private void unnamed(GmaChunk c) {
        for (int s = 1; s <= GmaFormat.PBNS_PER_CHUNK; s++) {
            if (!named[s] && c.used(s)) {
                compare(c, s, layout.pbnAt(c.index(), s), 0, 0);
            }
        }
    }

    private GmaChunk load(long c) {
        ReentrantLock l = gma.lock(c);
        l.lock();
        try {
            return gma.load(c); // nothing else runs on the scratch copy: the chunk stays as read
        } finally {
            l.unlock();
        }
    }

    WorkerFsckReport.Finding rcBelow() {
        return rcBelow.finding();
    }

    WorkerFsckReport.Finding rcAbove() {
        return rcAbove.finding();
    }

    WorkerFsckReport.Finding pinsDiffer() {
        return pinsDiffer.finding();
    }
}
