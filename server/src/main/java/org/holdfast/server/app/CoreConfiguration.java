package org.holdfast.server.app;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.ingest.IngestObserver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.BackupAdmission;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.IngestSettings;
import org.holdfast.server.ingest.SessionSpill;
import org.holdfast.server.ingest.IngestTls;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.AuthenticationFailedException;
import org.holdfast.server.security.TokenAuthenticator;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.DiskSpace;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3Settings;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Wires the core with constructors and settings records.
 *
 * <h2>Startup and shutdown order</h2>
 * Start: {@link DataDirectory} (checks writability, takes the lock) → {@link MetadataDb} →
 * {@link DataStore} (crash recovery) → {@link Catalog} → fingerprint index → {@link SnapshotCommit}
 * → {@link IngestServer} (bound last, by a {@link PortLifecycle}, once everything it needs is open).
 * Stop: the ingest lifecycle stops first (no new connections, sessions abandoned and drained, event
 * loops closed); then Spring destroys beans in reverse dependency order: the index, then the data
 * store (which syncs), then the metadata database, and last the data directory lock. Beans that
 * other subsystems add (engine, GC) must depend on {@link DataDirectory} or {@link MetadataDb} so that
 * they are closed before them.
 *
 * <h2>Seams</h2>
 * Every {@link CommitHook} bean takes part in each snapshot commit (in {@code @Order}); every
 * {@link ReferenceGuard} bean is told about the PBNs of sessions in progress. Without such beans
 * both are no-ops. The ingest port takes the {@link TokenAuthenticator} and {@link AuditLog} beans
 * (the token store and audit store provide them); without a token store it refuses every agent. An
 * {@link IngestObserver} bean (statistics' agent ledger) hears of connections, backup results and bytes moved.
 *
 * <h2>Workers</h2>
 * A worker ({@code holdfast.cluster.role=worker}) opens only the data directory, the metadata database
 * (users, tokens, audit) and the clock here; the rest needs {@link OnStandaloneOrMaster}.
 */
@Configuration(proxyBeanMethods = false)
public class CoreConfiguration {
    /** Refuses every token: what the ingest port uses when no token store is wired. */
    static final TokenAuthenticator NO_TOKEN_STORE = token -> {
        throw new AuthenticationFailedException(AuthenticationFailedException.Reason.UNKNOWN,
                "this server has no token store configured, so it accepts no agent tokens");
    };

    @Bean(destroyMethod = "close")
    DataDirectory dataDirectory(HoldfastProperties props) {
        return DataDirectory.open(props.dataDir());
    }

    @Bean(destroyMethod = "close")
    MetadataDb metadataDb(DataDirectory dir, HoldfastProperties props) {
        MetadataDb db = MetadataDb.open(dir.catalogDir(), List.of(), props.store().fsync().forces());
        try {
            db.verifyChecksums(); // a damaged catalog file refuses the start (StoreFailureAnalyzer names the repair)
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
        return db;
    }

    @Bean(destroyMethod = "close")
    @Conditional(OnStandaloneOrMaster.class)
    DataStore dataStore(DataDirectory dir, MetadataDb db, HoldfastProperties props, ObjectProvider<LogArchive> archive) {
        HoldfastProperties.Store s = props.store();
        // opening finishes or discards a compaction a crash interrupted; GC runs compact online
        DataStore.Settings settings = new DataStore.Settings(dir.dataDir(), s.logRollSize().toBytes(), s.fsync(), s.pbnReserveBatch(),
                s.minFreeSpace().toBytes());
        LogArchive a = archive.getIfAvailable(); // null: backend local
        if (s.simulatedDiskSize().toBytes() > 0) {
            DiskSpace disk = DiskSpace.simulated(dir.root(), s.simulatedDiskSize().toBytes());
            return a == null ? DataStore.open(settings, db, disk) : DataStore.open(settings, db, disk, a);
        }
        return a == null ? DataStore.open(settings, db) : DataStore.open(settings, db, a);
    }

    /** Backend s3: the object store sealed logs go to, probed for create-only PUTs before the store opens. */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = "holdfast.store.backend", havingValue = "s3")
    @Conditional(OnStandaloneOrMaster.class)
    LogArchive logArchive(HoldfastProperties props) {
        HoldfastProperties.S3 c = props.store().s3();
        S3Settings settings = S3Settings.of(c.endpoint(), c.region(), c.bucket(), c.prefix(), c.credentialsFile(), c.pathStyle())
                .withChecksumsWhenRequired(c.checksumsWhenRequired())
                .withRateLimits(c.maxReadRequestsPerSecond(), c.maxWriteRequestsPerSecond());
        return new LogArchive(S3ObjectStore.open(settings), c.node(), c.cache()); // blank: a random node id kept in the catalog
    }

    @Bean
    @Conditional(OnStandaloneOrMaster.class)
    Catalog catalog(MetadataDb db) {
        return new Catalog(db);
    }

    @Bean
    Clock holdfastClock() {
        return Clock.systemUTC();
    }

    @Bean
    @Conditional(OnStandaloneOrMaster.class)
    SnapshotCommit snapshotCommit(Catalog catalog, ObjectProvider<CommitHook> hooks, Clock holdfastClock) {
        List<CommitHook> all = hooks.orderedStream().toList();
        CommitHook hook = all.isEmpty() ? CommitHook.NONE : all.size() == 1 ? all.get(0) : (commit, batch) -> {
            List<CommitHook.AfterCommit> after = new ArrayList<>(all.size());
            for (CommitHook h : all) {
                after.add(h.onCommit(commit, batch));
            }
            return () -> after.forEach(CommitHook.AfterCommit::run);
        };
        return new SnapshotCommit(catalog, hook, holdfastClock);
    }

    @Bean
    @Conditional(OnStandaloneOrMaster.class)
    IngestServices ingestServices(DataStore dataStore, Catalog catalog, SnapshotCommit snapshotCommit, FingerprintIndex index,
                                  ObjectProvider<ReferenceGuard> guards, Clock holdfastClock,
                                  ObjectProvider<TokenAuthenticator> authenticator, ObjectProvider<AuditLog> audit,
                                  ObjectProvider<IngestObserver> observer, ObjectProvider<BackupAdmission> admission,
                                  ObjectProvider<BlockHome> blocks) {
        List<ReferenceGuard> all = guards.orderedStream().toList();
        ReferenceGuard guard = all.isEmpty() ? ReferenceGuard.NONE : all.size() == 1 ? all.get(0) : new ReferenceGuard() {
            @Override
            public void protect(long sessionId, long[] pbns, int off, int count) {
                for (ReferenceGuard g : all) {
                    g.protect(sessionId, pbns, off, count);
                }
            }

            @Override
            public boolean counted(long pbn) {
                return all.stream().anyMatch(g -> g.counted(pbn));
            }

            @Override
            public void release(long sessionId, boolean committed) {
                for (ReferenceGuard g : all) {
                    g.release(sessionId, committed);
                }
            }
        };
        // The ingest port always checks tokens: without a token store every connection is refused.
        return new IngestServices(dataStore, catalog, snapshotCommit, index, guard, holdfastClock,
                authenticator.getIfAvailable(() -> NO_TOKEN_STORE), audit.getIfAvailable(() -> AuditLog.NONE),
                observer.getIfAvailable(() -> IngestObserver.NONE), admission.getIfAvailable(() -> BackupAdmission.NONE),
                blocks.getIfAvailable()); // by holdfast.cluster.data (ClusterDataConfiguration); null: the data store
    }

    @Bean
    @Conditional(OnStandaloneOrMaster.class)
    IngestServer ingestServer(IngestServices services, HoldfastProperties props, ObjectProvider<BuildProperties> build,
                              ObjectProvider<ServerCertificate> certificate, DataDirectory dir) {
        HoldfastProperties.Ingest i = props.ingest();
        String version = build.getIfAvailable() != null ? build.getIfAvailable().getVersion() : "0.1.0-SNAPSHOT";
        ServerCertificate cert = certificate.getIfAvailable(); // absent when holdfast.tls.enabled=false (TlsConfiguration)
        return new IngestServer(new IngestSettings(i.host(), i.port(), i.sessionThreads(), i.segmentEntries(), i.maxQueuedFrames(),
                i.maxQueuedBytes().toBytes(), i.idleTimeout(), "holdfast-server/" + version, cert == null ? null
                        : IngestTls.of(cert.privateKey(), cert.chain(), props.tls().engine()), i.limits(), sessionSpill(dir, i)),
                services);
    }

    /** The session spill directory of this data directory, emptied of what a crash left there. */
    private static SessionSpill sessionSpill(DataDirectory dir, HoldfastProperties.Ingest i) {
        SessionSpill spill = new SessionSpill(dir.subdirectory("session-spill"), i.sessionMemoryEntries());
        spill.removeLeftovers();
        return spill;
    }

    /** A worker opens no agent port: agents talk to the master only. */
    @Bean
    @Conditional(OnStandaloneOrMaster.class)
    PortLifecycle ingestLifecycle(IngestServer server) {
        return new PortLifecycle(server::start, server);
    }
}
