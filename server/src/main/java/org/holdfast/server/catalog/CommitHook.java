package org.holdfast.server.catalog;

import org.holdfast.server.store.MetadataBatch;

/**
 * Lets another subsystem (GC bookkeeping) take part in a snapshot commit.
 *
 * <p>{@link #onCommit} runs inside {@link SnapshotCommit#commit} after the delta is known and before
 * the switch batch is written: whatever it adds to {@code batch} becomes durable atomically with the
 * snapshot, and if it throws, the commit fails and nothing becomes visible (map entries a large
 * commit wrote in chunks before are removed before the next commit). The {@link AfterCommit} it
 * returns runs once the batch is durable (for in-memory state and queues); what the first half
 * decided reaches the second through that object, never through fields of the hook. Commits are
 * serialised: the hook is never called for two commits at once. Cost must stay proportional to the delta,
 * and memory bounded: read the delta with its cursor (it may be spilled to disk).
 */
@FunctionalInterface
public interface CommitHook {

    /** Adds this subsystem's writes for the committed snapshot to {@code batch}; answers what to do once it is durable. */
    AfterCommit onCommit(CommittedSnapshot commit, MetadataBatch batch);

    /** The second half of a hook, run after the commit's batch is durable. */
    @FunctionalInterface
    interface AfterCommit {
        /** Must not throw for ordinary reasons (the snapshot exists). */
        void run();

        /** Nothing to do after the commit. */
        AfterCommit NOTHING = () -> { };
    }

    /** Does nothing. */
    CommitHook NONE = (commit, batch) -> AfterCommit.NOTHING;
}
