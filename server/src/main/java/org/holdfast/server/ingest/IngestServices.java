package org.holdfast.server.ingest;

import java.time.Clock;
import java.util.Objects;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.TokenAuthenticator;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LocalBlockHome;

/**
 * The core services a connection works with; all thread-safe and owned by the caller of {@link IngestServer}.
 * {@code authenticator} checks the token of every HELLO (asked anew for each connection, so a
 * revocation holds from the next one); {@code audit} receives commits, restores and refusals;
 * {@code observer} hears of agent connections, backup results and bytes moved (for statistics).
 * {@code admission} may refuse a backup at BACKUP_BEGIN (quota) and hears how each one ended.
 * {@code blocks} is where sessions store and restores read blocks (null: {@code dataStore}, as a
 * standalone server; the workers' range stores with {@code holdfast.cluster.data=workers}), while
 * bad blocks, repairs and possession stay with {@code dataStore}.
 */
public record IngestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                             ReferenceGuard referenceGuard, Clock clock, TokenAuthenticator authenticator, AuditLog audit,
                             IngestObserver observer, BackupAdmission admission, BlockHome blocks) {
    public IngestServices {
        Objects.requireNonNull(authenticator, "authenticator: the ingest port never runs without token checks");
        Objects.requireNonNull(audit, "audit");
        observer = observer == null ? IngestObserver.NONE : observer;
        admission = admission == null ? BackupAdmission.NONE : admission;
        blocks = blocks == null ? new LocalBlockHome(dataStore) : blocks;
    }

    /** Services whose blocks live in {@code dataStore}. */
    public IngestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                          ReferenceGuard referenceGuard, Clock clock, TokenAuthenticator authenticator, AuditLog audit,
                          IngestObserver observer, BackupAdmission admission) {
        this(dataStore, catalog, snapshotCommit, index, referenceGuard, clock, authenticator, audit, observer, admission, null);
    }

    /** Services that record connections and transfers, without quotas or recorded outcomes. */
    public IngestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                          ReferenceGuard referenceGuard, Clock clock, TokenAuthenticator authenticator, AuditLog audit,
                          IngestObserver observer) {
        this(dataStore, catalog, snapshotCommit, index, referenceGuard, clock, authenticator, audit, observer, BackupAdmission.NONE);
    }

    /** Services with quotas and recorded outcomes, without the statistics observer. */
    public IngestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                          ReferenceGuard referenceGuard, Clock clock, TokenAuthenticator authenticator, AuditLog audit,
                          BackupAdmission admission) {
        this(dataStore, catalog, snapshotCommit, index, referenceGuard, clock, authenticator, audit, IngestObserver.NONE, admission);
    }

    /** Services without an observer, quotas or recorded outcomes. */
    public IngestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                          ReferenceGuard referenceGuard, Clock clock, TokenAuthenticator authenticator, AuditLog audit) {
        this(dataStore, catalog, snapshotCommit, index, referenceGuard, clock, authenticator, audit, IngestObserver.NONE,
                BackupAdmission.NONE);
    }
}
