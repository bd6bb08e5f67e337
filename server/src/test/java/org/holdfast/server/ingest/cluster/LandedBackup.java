package org.holdfast.server.ingest.cluster;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.catalog.ReferenceGuard;

/**
 * What the backup that stored blocks on a worker does once their answers came back, for tests that store
 * with DATA_STORE directly: it protects them in its session on the worker (which takes them off the
 * worker's answered stores) and, once committed or failed, ends the session there.
 */
final class LandedBackup {
    private LandedBackup() {
    }

    /** Protects {@code pbns} in session {@code session} over {@code master}'s link, then ends it; returns once the worker ended it. */
    static void protectAndEnd(ClusterServer master, WorkerGcMetadata gc, long session, long[] pbns) {
        RangeReferenceGuard guard = new RangeReferenceGuard(new PbnRange(1, OneRangeWorker.FIRST), ReferenceGuard.NONE,
                master.gcGuards());
        guard.protect(session, pbns, 0, pbns.length);
        guard.release(session, true);
        await().atMost(Duration.ofSeconds(10)).until(() -> gc.guard().openSessions() == 0 && gc.answered().pending() == 0);
    }
}
