package org.holdfast.gc.bosc;

import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;

/**
 * One background commit thread (thesis 5.6): takes pending chunks in disk order from a moving
 * cursor (an elevator sweep), applies their queued updates, writes them, then forces the GMA and
 * advances the checkpoint. Several committers work on disjoint chunks: a chunk being committed is
 * locked and skipped by the others. A pass that fails on I/O (a full disk) puts its queues back and
 * is retried with back-off; the thread only stops on damage or a bug ({@link BoscPipeline#failure()}).
 */
final class Committer implements Runnable {
    private static final System.Logger LOG = System.getLogger(Committer.class.getName());
    private final BoscPipeline pipeline;
    private final int id;
    private volatile boolean running = true;
    private long cursor;

    Committer(BoscPipeline pipeline, int id) {
        this.pipeline = pipeline;
        this.id = id;
    }

    void stop() {
        running = false;
    }

    /** Longest pause between retries of a pass that failed on I/O. */
    static final long MAX_BACKOFF_MILLIS = 1000;

    @Override
    public void run() {
        long backoff = 0;
        while (running) {
            try {
                long[] chunks = pipeline.queues().pendingFrom(cursor, pipeline.settings().commitBatchChunks());
                if (chunks.length == 0) {
                    if (backoff > 0) {
                        // the queues that failed went back and are gone: another pass (a sweep) committed them
                        backoff = resumed();
                    }
                    // a pass that ended just after another's checkpoint left it behind: move it now,
                    // so that an idle log can be trimmed (at most once a second)
                    pipeline.idleCheckpoint();
                    pipeline.queues().awaitWork(pipeline.settings().commitIdle().toMillis() + 1);
                    continue;
                }
                int done = pipeline.commitChunks(chunks, true);
                cursor = chunks[chunks.length - 1] + 1;
                if (backoff > 0) {
                    backoff = resumed();
                }
                if (done == 0) {
                    // every chunk was busy with another committer or the sweep: let them finish
                    Thread.sleep(1);
                } else if (pipeline.queues().queuedUpdates() < pipeline.settings().maxQueuedUpdates() / 2) {
                    // let updates accumulate so that one chunk write carries many of them
                    Thread.sleep(pipeline.settings().commitIdle().toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (GcCorruptException e) {
                pipeline.committerFailed(id, e); // retrying cannot mend a damaged chunk
                return;
            } catch (GcStoreException e) {
                if (!running) {
                    return; // stopped (a crash simulation closes the file under it): nothing to retry
                }
                // a full disk or an I/O error: the pass's queues went back; retry until it works
                if (backoff == 0) {
                    LOG.log(System.Logger.Level.WARNING, "GMA committer " + id + " cannot write (" + e.getMessage()
                            + "); GC updates wait in the log and the queues, retrying until it works (free space if the disk is full)");
                }
                pipeline.committerStalled(e);
                backoff = Math.min(MAX_BACKOFF_MILLIS, Math.max(10, backoff * 2));
                if (!pause(backoff)) {
                    return;
                }
            } catch (RuntimeException e) {
                pipeline.committerFailed(id, e);
                return;
            }
        }
    }

    /** Clears this committer's stall after a failed pass; returns the back-off to start again from (0). */
    private long resumed() {
        pipeline.committerStalled(null);
        LOG.log(System.Logger.Level.INFO, "GMA committer " + id + " writes again (space is back)");
        return 0;
    }

    private static boolean pause(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
