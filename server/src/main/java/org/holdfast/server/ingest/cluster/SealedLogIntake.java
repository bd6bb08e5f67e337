package org.holdfast.server.ingest.cluster;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import org.holdfast.common.protocol.SealedLogReport;

/**
 * The master's intake of one worker link's sealed-log reports (DATA_SYNCED's from cluster version 7,
 * SEALED_LOGS' from version 8): records them for the link's worker id (never an id the report names),
 * one at a time in arrival order, off the event loop (a synced catalog write). The reports of a link are
 * incremental, so order matters; after a failed one nothing more is recorded from the link (the caller
 * closes it, and the worker's next link starts with a full report). Across the worker's links the
 * {@link SealedLogOrder} keeps the order, and refuses a report of a link once a newer one registered.
 */
final class SealedLogIntake {
    private final long worker;
    private final SealedLogRecorder recorder;
    private final Executor executor;
    private final SealedLogOrder order;
    private final long link; // this link's number in the order
    private volatile String failed; // why a report of the link was not recorded; null while none failed

    /**
     * Records the reports of a new link of worker {@code worker} with {@code recorder}, in the master's
     * {@code order}, on the common pool (as a sync's continuation ran before).
     */
    SealedLogIntake(long worker, SealedLogRecorder recorder, SealedLogOrder order) {
        this(worker, recorder, order, ForkJoinPool.commonPool());
    }

    /** As above, on {@code executor} (tests: more threads than a 2-core machine's common pool). */
    SealedLogIntake(long worker, SealedLogRecorder recorder, SealedLogOrder order, Executor executor) {
        this.worker = worker;
        this.recorder = recorder;
        this.executor = executor;
        this.order = order;
        this.link = order.linked(worker);
    }

    /** Records {@code r} after every report taken before it; completes once it is durable, or fails (so do all later ones). */
    CompletableFuture<Void> record(SealedLogReport r) {
        return order.then(worker, () -> {
            String why = failed;
            if (why != null) {
                throw new IllegalStateException("an earlier report of this link was not recorded (" + why + ")");
            }
            if (!order.isNewest(worker, link)) {
                failed = "a newer link of worker " + worker + " registered";
                throw new IllegalStateException(failed + ": this older link's report is not recorded (the newer link's first"
                        + " report is full)");
            }
            try {
                recorder.record(worker, r);
            } catch (RuntimeException e) {
                failed = String.valueOf(e.getMessage());
                throw e;
            }
        }, executor);
    }
}
