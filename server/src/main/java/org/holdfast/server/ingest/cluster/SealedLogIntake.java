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
 * closes it, and the worker's next link starts with a full report).
 */
final class SealedLogIntake {
    private final long worker;
    private final SealedLogRecorder recorder;
    private final Executor executor;
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null); // guarded by this
    private volatile String failed; // why a report of the link was not recorded; null while none failed

    /** Records worker {@code worker}'s reports with {@code recorder}, on the common pool (as a sync's continuation ran before). */
    SealedLogIntake(long worker, SealedLogRecorder recorder) {
        this.worker = worker;
        this.recorder = recorder;
        this.executor = ForkJoinPool.commonPool();
    }

    /** Records {@code r} after every report taken before it; completes once it is durable, or fails (so do all later ones). */
    synchronized CompletableFuture<Void> record(SealedLogReport r) {
        CompletableFuture<Void> next = tail.handle((v, e) -> null).thenRunAsync(() -> {
            String why = failed;
            if (why != null) {
                throw new IllegalStateException("an earlier report of this link was not recorded (" + why + ")");
            }
            try {
                recorder.record(worker, r);
            } catch (RuntimeException e) {
                failed = String.valueOf(e.getMessage());
                throw e;
            }
        }, executor);
        tail = next;
        return next;
    }
}
