package org.holdfast.server.ingest.cluster;

import java.util.function.LongPredicate;
import org.holdfast.common.protocol.CountsCheck;
import org.holdfast.common.protocol.CountsChecked;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.gma.GmaLayout;

/**
 * A worker's comparison of its GC counts with one COUNTS_CHECK span of the master's catalog counts:
 * every record's RC and pins, and every used GMA slot of the span no record names (RC and pins 0 by
 * the catalog); RC below the catalog's is the dangerous side (a sweep could free a block a snapshot
 * still needs), above it the leak side. Expiries are not compared: the worker raises them itself
 * (the grace of backups in flight), as in {@code CountsComparison}. A record whose block is still
 * needed ({@link CountsCheck#needed}) and that the range store does not hold is counted not held.
 *
 * <p>Read-only: each chunk is read through {@link BoscPipeline#withCurrentChunk}, which first applies
 * what the worker's log already queued for it (as its committers would), after a barrier, so the
 * comparison sees every delta the worker acknowledged; the action changes no slot.
 */
final class CountsSpanCheck {
    private final BoscPipeline pipeline;
    private final LongPredicate held;
    private long compared;
    private long rcBelow;
    private long rcAbove;
    private long pinsDiffer;
    private long notHeld;
    private final long[] samplePbns = new long[CountsChecked.MAX_SAMPLES];
    private final int[] sampleKinds = new int[CountsChecked.MAX_SAMPLES];
    private int samples;

    /** Over {@code pipeline}'s GMA; {@code held} says whether the range store holds a PBN. */
    CountsSpanCheck(BoscPipeline pipeline, LongPredicate held) {
        this.pipeline = pipeline;
        this.held = held;
    }

    /** Compares span {@code c} (inside the pipeline's range) and answers with what differs. */
    CountsChecked run(CountsCheck c) {
        pipeline.awaitEnqueued(); // every acknowledged delta's updates are queued before the chunks are brought up to date
        GmaLayout layout = pipeline.layout();
        long chunkLimit = pipeline.chunkLimit();
        int[] next = {0}; // the next record
        for (long ci = layout.chunkOf(c.first()); ci <= layout.chunkOf(c.limit() - 1); ci++) {
            long chunk = ci;
            if (chunk >= chunkLimit) {
                // never written nor queued: every slot is unused
                compareSlots(c, next, chunk, layout, null);
            } else {
                pipeline.withCurrentChunk(chunk, g -> compareSlots(c, next, chunk, layout, g));
            }
        }
        for (int i = 0; i < c.pbns().length; i++) {
            if (c.needed(i) && !held.test(c.pbns()[i])) {
                notHeld++;
                sample(c.pbns()[i], CountsChecked.KIND_NOT_HELD);
            }
        }
        return new CountsChecked(c.requestId(), CountsChecked.COMPARED, compared, rcBelow, rcAbove, pinsDiffer, notHeld,
                java.util.Arrays.copyOf(samplePbns, samples), java.util.Arrays.copyOf(sampleKinds, samples), "");
    }

    private void compareSlots(CountsCheck c, int[] next, long chunk, GmaLayout layout, GmaChunk g) {
        for (int s = 1; s <= GmaFormat.PBNS_PER_CHUNK; s++) {
            long pbn = layout.pbnAt(chunk, s);
            if (pbn < c.first() || pbn >= c.limit()) {
                continue;
            }
            boolean named = next[0] < c.pbns().length && c.pbns()[next[0]] == pbn;
            boolean used = g != null && g.used(s);
            if (!named && !used) {
                continue;
            }
            int rc = named ? c.rc()[next[0]] : 0;
            int pins = named ? c.pins()[next[0]] : 0;
            if (named) {
                next[0]++;
            }
            compared++;
            int gmaRc = used ? g.rc(s) : 0;
            int gmaPins = used ? g.pins(s) : 0;
            if (gmaRc < rc) {
                rcBelow++;
                sample(pbn, CountsChecked.KIND_RC_BELOW);
            } else if (gmaRc > rc) {
                rcAbove++;
                sample(pbn, CountsChecked.KIND_RC_ABOVE);
            }
            if (gmaPins != pins) {
                pinsDiffer++;
                sample(pbn, CountsChecked.KIND_PINS);
            }
        }
    }

    private void sample(long pbn, int kind) {
        if (samples < samplePbns.length) {
            samplePbns[samples] = pbn;
            sampleKinds[samples++] = kind;
        }
    }
}
