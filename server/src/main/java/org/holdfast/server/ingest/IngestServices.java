package org.holdfast.server.ingest;

import java.time.Clock;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.DataStore;

/** The core services a connection works with; all thread-safe and owned by the caller of {@link IngestServer}. */
public record IngestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                             ReferenceGuard referenceGuard, Clock clock) {
}
