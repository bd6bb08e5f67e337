package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.holdfast.common.protocol.CountsCheck;
import org.holdfast.common.protocol.CountsChecked;
import org.holdfast.server.jobs.JobContext;

/**
 * The COUNTS_CHECK spans sent to one worker by {@link ClusterCountsCheck} and the sum of its answers:
 * records are gathered in PBN order and sent as spans of at most {@link CountsCheck#MAX_RECORDS}
 * records and {@link CountsCheck#MAX_SPAN} PBNs, one at a time, each awaited.
 */
final class CountsSpanTally {
    private final ClusterCountsCheck.Remote remote;
    private final long now;
    private final JobContext job;
    private final long[] pbns = new long[CountsCheck.MAX_RECORDS];
    private final int[] rc = new int[CountsCheck.MAX_RECORDS];
    private final int[] pins = new int[CountsCheck.MAX_RECORDS];
    private final long[] et = new long[CountsCheck.MAX_RECORDS];
    final List<String> samples = new ArrayList<>();
    private int n;
    private long spanStart;
    long blocks;
    long compared;
    long rcBelow;
    long rcAbove;
    long pinsDiffer;
    long notHeld;
    long bytes;

    CountsSpanTally(ClusterCountsCheck.Remote remote, long now, JobContext job) {
        this.remote = remote;
        this.now = now;
        this.job = job;
    }

    /** Starts the next span at {@code pbn}; nothing may be gathered and not yet sent. */
    void startAt(long pbn) {
        if (n != 0) {
            throw new IllegalStateException(n + " records gathered and not sent");
        }
        spanStart = pbn;
    }

    /** Gathers one referenced PBN's counts (PBNs ascending, not below the span start); sends full spans. */
    void add(long pbn, int c, int p, long e) {
        if (n == CountsCheck.MAX_RECORDS || pbn - spanStart >= CountsCheck.MAX_SPAN) {
            flush(pbn);
        }
        pbns[n] = pbn;
        rc[n] = c;
        pins[n] = p;
        et[n] = e;
        n++;
        blocks++;
    }

    /** Sends the spans [span start, limit) with the records gathered (also empty ones: the worker's slots there are compared). */
    void flush(long limit) {
        while (spanStart < limit) {
            long end = Math.min(limit, spanStart + CountsCheck.MAX_SPAN);
            int k = 0;
            while (k < n && pbns[k] < end) {
                k++;
            }
            send(spanStart, end, k);
            System.arraycopy(pbns, k, pbns, 0, n - k);
            System.arraycopy(rc, k, rc, 0, n - k);
            System.arraycopy(pins, k, pins, 0, n - k);
            System.arraycopy(et, k, et, 0, n - k);
            n -= k;
            spanStart = end;
        }
    }

    private void send(long first, long limit, int k) {
        CountsChecked a;
        try {
            a = remote.check(first, limit, now, Arrays.copyOf(pbns, k), Arrays.copyOf(rc, k), Arrays.copyOf(pins, k),
                    Arrays.copyOf(et, k)).get(10, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            throw new WorkerLost("lost during the check: " + e.getCause().getMessage());
        } catch (TimeoutException e) {
            throw new WorkerLost("no answer to a span within 10 minutes; nothing was changed");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WorkerLost("the check was interrupted");
        }
        if (a.status() != CountsChecked.COMPARED) {
            throw new WorkerLost("the worker refused: " + a.message());
        }
        long frame = 36L + 24L * k;
        bytes += frame;
        job.advance(0, frame);
        compared += a.compared();
        rcBelow += a.rcBelow();
        rcAbove += a.rcAbove();
        pinsDiffer += a.pinsDiffer();
        notHeld += a.notHeld();
        for (int i = 0; i < a.samplePbns().length && samples.size() < CountsChecked.MAX_SAMPLES; i++) {
            samples.add("PBN " + a.samplePbns()[i] + ": " + switch (a.sampleKinds()[i]) {
                case CountsChecked.KIND_RC_BELOW -> "RC below the catalog's (risk of loss)";
                case CountsChecked.KIND_RC_ABOVE -> "RC above the catalog's (leak)";
                case CountsChecked.KIND_PINS -> "pins differ";
                default -> "needed but not held (data loss)";
            });
        }
    }

    /** The worker could not finish the check: reported for it, the check goes on with the next. */
    static final class WorkerLost extends RuntimeException {
        WorkerLost(String message) {
            super(message);
        }
    }
}
