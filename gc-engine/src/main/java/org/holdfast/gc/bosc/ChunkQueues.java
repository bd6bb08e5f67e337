package org.holdfast.gc.bosc;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.holdfast.gc.gma.GmaLayout;

/**
 * Updates waiting to be applied, one queue per GMA chunk, ordered by chunk index (disk order).
 * Records arrive from the log flusher in LSN order, so each queue is LSN-ordered. When more than
 * the configured number of updates wait, {@link #enqueue} blocks: the flusher stops, the log's
 * buffer fills and producers block in turn. Nothing is ever dropped.
 *
 * <p>It also tracks what the checkpoint needs: the oldest LSN still queued or being applied
 * ("in flight"), and the highest LSN handed over so far. All state is guarded by {@code this}.
 */
public final class ChunkQueues {
    private final TreeMap<Long, Queue> queues = new TreeMap<>();
    private final TreeMap<Long, Integer> inFlight = new TreeMap<>();
    private final ArrayDeque<long[]> groupEnds = new ArrayDeque<>();
    private final int capacity;
    private long total;
    private long enqueuedLsn;
    private boolean unbounded;
    private long chunkLimit;
    /** Bit per chunk: an update was queued for it since the sweep last took the bit. */
    private long[] touched = new long[16];

    private final GmaLayout layout;

    public ChunkQueues(int capacity, long enqueuedLsn) {
        this(capacity, enqueuedLsn, GmaLayout.STANDALONE);
    }

    /** Queues for a GMA of {@code layout} (which chunk each update goes to). */
    public ChunkQueues(int capacity, long enqueuedLsn, GmaLayout layout) {
        this.layout = layout;
        this.capacity = capacity;
        this.enqueuedLsn = enqueuedLsn;
    }

    /** During recovery the whole replay set is queued at once. */
    synchronized void unbounded(boolean on) {
        unbounded = on;
        notifyAll();
    }

    /**
     * Queues every update of {@code batch} (group markers only feed the operation-id tracking).
     * Blocks while the queues are full; a batch is admitted whole once there is room.
     */
    public synchronized void enqueue(UpdateBatch batch) throws InterruptedException {
        while (!unbounded && total >= capacity) {
            wait();
        }
        Queue q = null;
        long qChunk = -1;
        for (int i = 0; i < batch.size(); i++) {
            int kind = batch.kind(i);
            long lsn = batch.lsn(i);
            if (kind == UpdateBatch.GROUP_END) {
                groupEnds.add(new long[] {lsn, batch.pbn(i)});
                continue;
            }
            if (kind == UpdateBatch.GROUP_BEGIN) {
                continue;
            }
            long chunk = layout.chunkOf(batch.pbn(i));
            if (q == null || chunk != qChunk) {
                q = queues.computeIfAbsent(chunk, c -> new Queue());
                qChunk = chunk;
                touch(chunk);
                chunkLimit = Math.max(chunkLimit, chunk + 1);
            }
            q.add(lsn, kind, batch.pbn(i), batch.value(i));
            total++;
        }
        if (batch.size() > 0) {
            enqueuedLsn = Math.max(enqueuedLsn, batch.lsn(batch.size() - 1));
        }
        notifyAll();
    }

    private void touch(long chunk) {
        int w = (int) (chunk >>> 6);
        if (w >= touched.length) {
            touched = java.util.Arrays.copyOf(touched, Math.max(w + 1, touched.length * 2));
        }
        touched[w] |= 1L << chunk;
    }

    /** True if an update was queued for {@code chunk} since the last call for it; clears the mark. */
    synchronized boolean takeTouched(long chunk) {
        int w = (int) (chunk >>> 6);
        if (w >= touched.length) {
            return false;
        }
        boolean t = (touched[w] & (1L << chunk)) != 0;
        touched[w] &= ~(1L << chunk);
        return t;
    }

    /** Removes and returns chunk {@code chunk}'s queue, marking its oldest LSN in flight; null if empty. */
    synchronized Queue drain(long chunk) {
        Queue q = queues.remove(chunk);
        if (q == null) {
            return null;
        }
        total -= q.size;
        inFlight.merge(q.lsn[0], 1, Integer::sum);
        notifyAll();
        return q;
    }

    /**
     * A drained queue of {@code chunk} could not be made durable (a write or fsync failed): it goes
     * back in front of whatever was queued for the chunk since, so a later pass writes it again.
     */
    synchronized void requeue(long chunk, Queue q) {
        inFlight.computeIfPresent(q.lsn[0], (k, v) -> v == 1 ? null : v - 1);
        total += q.size; // the later entries are counted already
        Queue later = queues.get(chunk);
        if (later != null) {
            for (int i = 0; i < later.size; i++) {
                q.add(later.lsn[i], later.kind[i], later.pbn[i], later.value[i]);
            }
        }
        queues.put(chunk, q);
        notifyAll();
    }

    /** The drained queue is durable in the GMA: it no longer holds the checkpoint back. */
    synchronized void finished(Queue q) {
        inFlight.computeIfPresent(q.lsn[0], (k, v) -> v == 1 ? null : v - 1);
    }

    /** Up to {@code max} pending chunk indexes from {@code from} upwards, wrapping around. */
    synchronized long[] pendingFrom(long from, int max) {
        long[] out = new long[Math.min(max, queues.size())];
        int n = 0;
        for (Long c : queues.tailMap(from, true).keySet()) {
            if (n == out.length) {
                break;
            }
            out[n++] = c;
        }
        for (Long c : queues.headMap(from, false).keySet()) {
            if (n == out.length) {
                break;
            }
            out[n++] = c;
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** Waits up to {@code millis} for any update to be queued. */
    synchronized void awaitWork(long millis) throws InterruptedException {
        if (queues.isEmpty()) {
            wait(millis);
        }
    }

    /**
     * The LSN where replay would have to start now: the oldest record queued or in flight, or the
     * one after the newest handed over. Also returns (in {@code opOut[0]}) the highest operation id
     * whose group ended below that LSN.
     */
    synchronized long oldestUncommitted(long[] opOut) {
        long min = enqueuedLsn + 1;
        for (Queue q : queues.values()) {
            min = Math.min(min, q.lsn[0]);
        }
        if (!inFlight.isEmpty()) {
            min = Math.min(min, inFlight.firstKey());
        }
        while (!groupEnds.isEmpty() && groupEnds.peekFirst()[0] < min) {
            opOut[0] = Math.max(opOut[0], groupEnds.pollFirst()[1]);
        }
        return min;
    }

    /** One past the highest chunk that ever had an update queued (queued, in flight or done), or 0. */
    synchronized long chunkLimit() {
        return chunkLimit;
    }

    public synchronized long queuedUpdates() {
        return total;
    }

    public synchronized int pendingChunks() {
        return queues.size();
    }

    synchronized long enqueuedLsn() {
        return enqueuedLsn;
    }

    /** Waits up to 100 ms for every record up to {@code lsn} to be queued (the caller loops). */
    synchronized void awaitEnqueued(long lsn) throws InterruptedException {
        // one bounded wait: the caller loops and checks meanwhile whether the log writer is stalled or dead
        if (enqueuedLsn < lsn) {
            wait(100);
        }
    }

    synchronized Map<Long, Queue> snapshotForTest() {
        return new TreeMap<>(queues);
    }

    /** One chunk's pending updates, LSN-ordered, in primitive arrays. */
    static final class Queue {
        long[] lsn = new long[8];
        byte[] kind = new byte[8];
        long[] pbn = new long[8];
        long[] value = new long[8];
        int size;

        void add(long l, int k, long p, long v) {
            if (size == lsn.length) {
                int c = size * 2;
                lsn = Arrays.copyOf(lsn, c);
                kind = Arrays.copyOf(kind, c);
                pbn = Arrays.copyOf(pbn, c);
                value = Arrays.copyOf(value, c);
            }
            lsn[size] = l;
            kind[size] = (byte) k;
            pbn[size] = p;
            value[size] = v;
            size++;
        }
    }
}
