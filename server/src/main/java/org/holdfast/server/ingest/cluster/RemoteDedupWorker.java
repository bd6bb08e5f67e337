package org.holdfast.server.ingest.cluster;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.concurrent.Futures;
import org.holdfast.common.protocol.DedupAnswer;
import org.holdfast.common.protocol.DedupCandidates;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupForget;
import org.holdfast.common.protocol.DedupLookup;
import org.holdfast.common.protocol.DedupProbe;
import org.holdfast.common.protocol.DedupRecord;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.engine.DedupLoad;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.ProbeAnswer;
import org.holdfast.server.engine.SegmentAnswer;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SegmentProbe;
import org.holdfast.server.engine.SegmentRecord;

/**
 * A {@link DedupWorker} in another process, as worker {@code index} of the master's list: each call
 * goes over the worker's {@link DedupLink} as one request frame with the arrays as they are (a
 * forget of more PBNs than a frame holds as several, in order). A call
 * through a lost link fails with {@link DedupWorkerLostException}, so a backup through it stops
 * with that error and never takes a PBN the worker did not answer.
 */
public final class RemoteDedupWorker implements DedupWorker {
    private final int index;
    private final long workerId;
    private final DedupLink link;
    private volatile DedupLoad lastLoad;

    /** Worker {@code workerId} of the cluster membership, number {@code index} in the master's list, over {@code link}. */
    public RemoteDedupWorker(int index, long workerId, DedupLink link) {
        this.index = index;
        this.workerId = workerId;
        this.link = link;
        this.lastLoad = new DedupLoad(index, 0, 0, 0, 0, 0, 0, 0);
    }

    @Override
    public int id() {
        return index;
    }

    /** The membership's worker id: what the master's range stores are keyed by (data on workers). */
    @Override
    public long memberId() {
        return workerId;
    }

    /** The link this proxy calls over. */
    public DedupLink link() {
        return link;
    }

    @Override
    public CompletableFuture<SegmentAnswer> lookup(SegmentLookup request) {
        int n = request.count();
        long id = link.nextId();
        return link.call(id, new DedupLookup(id, request.stream(), n, exact(request.fps(), n * 32))).thenApply(m -> {
            if (!(m instanceof DedupAnswer a) || a.count() != n) {
                throw link.lostError("it answered " + m.type() + " to a lookup of " + n + " entries");
            }
            OtherRangePbns distrusted = link.distrusted();
            if (distrusted != null) {
                long[] pbns = a.pbns().clone();
                int[] runs = a.runs().clone();
                distrusted.asMisses(pbns, runs, n);
                return new SegmentAnswer(index, n, pbns, runs, load(a.load()));
            }
            return new SegmentAnswer(index, n, a.pbns(), a.runs(), load(a.load()));
        });
    }

    @Override
    public CompletableFuture<ProbeAnswer> probe(SegmentProbe request) {
        int n = request.sampleCount();
        long id = link.nextId();
        long[] words = request.words().length == n ? request.words() : Arrays.copyOf(request.words(), n);
        return link.call(id, new DedupProbe(id, request.stream(), request.key(), request.count(), n, words))
                .thenApply(m -> {
                    if (!(m instanceof DedupCandidates c)) {
                        throw link.lostError("it answered " + m.type() + " to a probe");
                    }
                    return new ProbeAnswer(index, c.candidates(), load(c.load()));
                });
    }

    @Override
    public CompletableFuture<Void> record(SegmentRecord request) {
        int n = request.count();
        boolean[] isNew = request.isNew().length == n ? request.isNew() : Arrays.copyOf(request.isNew(), n);
        long[] pbns = request.pbns().length == n ? request.pbns() : Arrays.copyOf(request.pbns(), n);
        long id = link.nextId();
        return link.call(id, new DedupRecord(id, request.stream(), n, request.placed(), exact(request.fps(), n * 32), pbns, isNew))
                .thenAccept(this::done);
    }

    private static byte[] exact(byte[] a, int length) {
        return a.length == length ? a : Arrays.copyOf(a, length);
    }

    @Override
    public void forget(long[] pbns, byte[] fps, int count) {
        // a sweep batch frees up to 64 GMA chunks of PBNs, several times what one frame may carry
        for (int from = 0; from < count; from += ProtocolLimits.MAX_DEDUP_ENTRIES) {
            int n = Math.min(ProtocolLimits.MAX_DEDUP_ENTRIES, count - from);
            long id = link.nextId();
            done(Futures.join(link.call(id, new DedupForget(id, n, Arrays.copyOfRange(pbns, from, from + n),
                    Arrays.copyOfRange(fps, from * 32, (from + n) * 32)))));
        }
    }

    @Override
    public void closeStream(long stream) {
        long id = link.nextId();
        link.call(id, new DedupControl(id, DedupControl.END_STREAM, stream)); // nobody waits: the worker ends it in order
    }

    @Override
    public void flush() {
        long id = link.nextId();
        done(Futures.join(link.call(id, new DedupControl(id, DedupControl.FLUSH, 0))));
    }

    /** The worker's load, asked over the link; the last known one if the link is down. */
    @Override
    public DedupLoad load() {
        if (!link.isUp()) {
            return lastLoad;
        }
        long id = link.nextId();
        try {
            done(Futures.join(link.call(id, new DedupControl(id, DedupControl.LOAD, 0))));
        } catch (DedupWorkerLostException e) {
            // the last known figures are all there is
        }
        return lastLoad;
    }

    private void done(Message m) {
        if (!(m instanceof DedupDone d)) {
            throw link.lostError("it answered " + m.type() + " where DEDUP_DONE was due");
        }
        load(d.load());
    }

    private DedupLoad load(long[] l) {
        DedupLoad d = new DedupLoad(index, l[0], (int) Math.min(Integer.MAX_VALUE, l[1]), l[2], l[3], l[4], l[5], l[6]);
        lastLoad = d;
        return d;
    }

    /** Stops using the worker through this proxy; the link stays (it belongs to the worker's membership). */
    @Override
    public void close() {
        // nothing held here: the link's pending calls end with the link
    }
}
