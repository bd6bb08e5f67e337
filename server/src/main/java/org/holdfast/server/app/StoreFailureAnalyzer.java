package org.holdfast.server.app;

import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoreException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a storage failure at startup (data directory not writable or locked by another server,
 * corrupt catalog, unreadable data log) into a short, clear report instead of a bean-creation
 * stack trace.
 */
public class StoreFailureAnalyzer extends AbstractFailureAnalyzer<StoreException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, StoreException cause) {
        if (cause instanceof CorruptDataException && cause.store().equals("metadata-db")) {
            return new FailureAnalysis("Holdfast found its catalog damaged at start: " + cause.getMessage(),
                    "Stop here: " + MetadataDb.REPAIR_HINT + " (see docs/operations.md, troubleshooting).", cause);
        }
        if (cause instanceof CorruptDataException && cause.store().equals("data-store")
                && FormatVersions.META_DURABLE_POINT.equals(cause.key())) {
            // data logs without a catalog: fsck needs the catalog, so "run fsck" would send the operator nowhere
            return new FailureAnalysis("Holdfast cannot open its storage: " + cause.getMessage(),
                    "Stop here: " + MetadataDb.REPAIR_HINT + " (see docs/operations.md, \"Back up the catalog, and recover a lost server\").",
                    cause);
        }
        String action = switch (cause.store()) {
            case "data-dir" -> "Check holdfast.data-dir: it must be a writable directory that no other Holdfast server uses.";
            case "metadata-db" -> "Check that no other process uses the catalog under holdfast.data-dir and that the disk is healthy.";
            default -> "Check the disk under holdfast.data-dir; if data is reported corrupt, run the checker (fsck) before restarting.";
        };
        return new FailureAnalysis("Holdfast cannot open its storage: " + cause.getMessage(), action, cause);
    }
}
