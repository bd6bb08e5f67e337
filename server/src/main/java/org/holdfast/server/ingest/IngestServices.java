package org.holdfast.server.ingest;

import java.time.Clock;
import java.util.Objects;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.TokenAuthenticator;
import org.holdfast.server.store.DataStore;

/**
 * The core services a connection works with; all thread-safe and owned by the caller of {@link IngestServer}.
 * {@code authenticator} checks the token of every HELLO (asked anew for each connection, so a
 * revocation holds from the next one); {@code audit} receives commits, restores and refusals;
 * {@code observer} hears of agent connections, backup results and bytes moved (for statistics).
 * {@code admission} may refuse a backup at BACKUP_BEGIN (quota) and hears how each one ended.
 */
public record IngestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                             ReferenceGuard referenceGuard, Clock clock, TokenAuthenticator authenticator, AuditLog audit,
                             IngestObserver observer, BackupAdmission admission) {
    public IngestServices {
        Objects.requireNonNull(authenticator, "authenticator: the ingest port never runs without token checks");
        Objects.requireNonNull(audit, "audit");
        observer = observer == null ? IngestObserver.NONE : observer;
        admission = admission == null ? BackupAdmission.NONE : admission;
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
