package org.holdfast.server.catalog;

import org.rocksdb.WriteBatch;

/**
 * Lets another subsystem (GC bookkeeping) take part in a snapshot commit.
 *
 * <p>{@link #onCommit} runs inside {@link SnapshotCommit#commit} after the delta is known and before
 * anything is written: whatever it adds to {@code batch} becomes durable atomically with the
 * snapshot, and if it throws, the commit fails and nothing is written. {@link #afterCommit} runs
 * once the batch is durable (for in-memory state and queues). Commits are serialised: the hook is
 * never called for two commits at once. Cost must stay proportional to the delta.
 */
public interface CommitHook {

    /** Adds this subsystem's writes for the committed snapshot to {@code batch}. */
    void onCommit(CommittedSnapshot commit, WriteBatch batch);

    /** Called after the batch is durable; must not throw for ordinary reasons (the snapshot exists). */
    void afterCommit(CommittedSnapshot commit);

    /** Does nothing. */
    CommitHook NONE = new CommitHook() {
        @Override
        public void onCommit(CommittedSnapshot commit, WriteBatch batch) {
        }

        @Override
        public void afterCommit(CommittedSnapshot commit) {
        }
    };
}
