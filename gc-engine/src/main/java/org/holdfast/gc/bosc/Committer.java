package org.holdfast.gc.bosc;

/**
 * One background commit thread (thesis 5.6): takes pending chunks in disk order from a moving
 * cursor (an elevator sweep), applies their queued updates, writes them, then forces the GMA and
 * advances the checkpoint. Several committers work on disjoint chunks: a chunk being committed is
 * locked and skipped by the others.
 */
final class Committer implements Runnable {
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

    @Override
    public void run() {
        try {
            while (running) {
                long[] chunks = pipeline.queues().pendingFrom(cursor, pipeline.settings().commitBatchChunks());
                if (chunks.length == 0) {
                    pipeline.queues().awaitWork(pipeline.settings().commitIdle().toMillis() + 1);
                    continue;
                }
                int done = pipeline.commitChunks(chunks, true);
                cursor = chunks[chunks.length - 1] + 1;
                if (done == 0) {
                    // every chunk was busy with another committer or the sweep: let them finish
                    Thread.sleep(1);
                } else if (pipeline.queues().queuedUpdates() < pipeline.settings().maxQueuedUpdates() / 2) {
                    // let updates accumulate so that one chunk write carries many of them
                    Thread.sleep(pipeline.settings().commitIdle().toMillis());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            pipeline.committerFailed(id, e);
        }
    }
}
