package org.holdfast.server.app;

import org.holdfast.gc.GcStoreException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a GC metadata failure at startup (a file under {@code <data-dir>/gc} missing its pieces,
 * unreadable or failing its checks) into a short report that names the way out: the offline
 * rebuild from the catalog.
 */
public class GcFailureAnalyzer extends AbstractFailureAnalyzer<GcStoreException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, GcStoreException cause) {
        return new FailureAnalysis("Holdfast cannot open its GC metadata: " + cause.getMessage(),
                "Check the disk under holdfast.data-dir. If <data-dir>/gc is damaged or lost, restore it from the same moment as "
                        + "the catalog, or stop the server and rebuild it from the catalog: holdfast-server gc-rebuild --data-dir "
                        + "<data-dir> (see docs/operations.md).", cause);
    }
}
