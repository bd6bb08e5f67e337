package org.holdfast.server.gc;

import java.util.function.BooleanSupplier;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.holdfast.server.store.MetadataBatch;

/**
 * Test fixture: the GC's commit hook, except that while {@code crash} says so it skips the second
 * half (after the batch is durable), as a process that dies right after the catalog batch is
 * durable and before the GC log has the commit.
 */
final class CrashBeforeGcLogHook implements CommitHook {
    private final CommitHook hook;
    private final BooleanSupplier crash;

    CrashBeforeGcLogHook(CommitHook hook, BooleanSupplier crash) {
        this.hook = hook;
        this.crash = crash;
    }

    @Override
    public AfterCommit onCommit(CommittedSnapshot c, MetadataBatch batch) {
        AfterCommit after = hook.onCommit(c, batch);
        return () -> {
            if (!crash.getAsBoolean()) {
                after.run();
            }
        };
    }
}
