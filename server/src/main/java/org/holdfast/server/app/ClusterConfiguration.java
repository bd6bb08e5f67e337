package org.holdfast.server.app;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.tls.CertificateFingerprint;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.api.NotOnAWorkerFilter;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.cluster.ClusterNode;
import org.holdfast.server.cluster.ClusterSetupException;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.gc.RegistrationCountsFence;
import org.holdfast.server.ingest.IngestTls;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.StaleMarkForwarder;
import org.holdfast.server.ingest.cluster.DedupLinks;
import org.holdfast.server.ingest.cluster.GcDeltaLinks;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.OwedForgets;
import org.holdfast.server.ingest.cluster.MasterLease;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerGcMetadata;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.ingest.cluster.WorkerRangeSweep;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.TokenAuthenticator;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3Settings;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.info.BuildProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Master/worker mode ({@code holdfast.cluster.*}, docs/operations.md "Master/worker mode
 * (preview)"). A master keeps the {@link WorkerRegistry} on its catalog and opens the cluster port;
 * a worker connects to its master and opens only its own dedup index, the store of its PBN range
 * ({@link WorkerRangeData}) and that range's GC metadata ({@link WorkerGcMetadata}): no agent port, node-wide data store,
 * catalog, standalone engine or GC ({@link OnStandaloneOrMaster}), and its REST answers what it lacks
 * with {@code not-on-a-worker}; a standalone server gets neither. Every role gets a
 * {@link ClusterNode} for the REST API.
 */
@Configuration(proxyBeanMethods = false)
// the worker's engine and GC-metadata settings: DedupEngineConfiguration and GcConfiguration, which also bind them, are not on a worker
@EnableConfigurationProperties({DedupEngineConfiguration.SungemProperties.class, GcConfiguration.GcProperties.class})
public class ClusterConfiguration {
    private static final String ROLE = "holdfast.cluster.role";
    /** A worker whose engine can serve the master's dedup calls (the exact engine cannot; the worker then refuses to start). */
    private static final String WORKER_WITH_ENGINE = "'${" + ROLE + ":standalone}' == 'worker'"
            + " && '${holdfast.dedup.engine:sungem}' != 'exact'";

    @Bean
    ClusterNode clusterNode(HoldfastProperties props, ObjectProvider<WorkerRegistry> registry, ObjectProvider<WorkerConnector> worker) {
        HoldfastProperties.Cluster c = props.cluster();
        String node = props.store().s3().node();
        return switch (c.clusterRole()) {
            case STANDALONE -> ClusterNode.standalone(node);
            case MASTER -> ClusterNode.master(node, c.host() + ":" + c.port(), registry.getObject());
            case WORKER -> ClusterNode.worker(node, c.master(), worker.getObject()::status);
        };
    }

    @Bean
    @ConditionalOnProperty(name = ROLE, havingValue = "master")
    WorkerRegistry workerRegistry(MetadataDb db, HoldfastProperties props, Clock holdfastClock) {
        try {
            return new WorkerRegistry(new ClusterStore(db), props.cluster().membership(), holdfastClock, System::nanoTime);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new ClusterSetupException(e.getMessage(), e);
        }
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = ROLE, havingValue = "master")
    ClusterServer clusterServer(WorkerRegistry registry, HoldfastProperties props, ObjectProvider<ServerCertificate> certificate,
                                ObjectProvider<TokenAuthenticator> tokens, ObjectProvider<AuditLog> audit,
                                ObjectProvider<BuildProperties> build, DedupLinks dedupLinks, GcDeltaLinks gcDeltaLinks,
                                ClusterDataMode dataMode, MetadataDb db, DataDirectory dir, ObjectProvider<DataStore> dataStore) {
        ServerCertificate cert = certificate.getIfAvailable(); // absent with holdfast.tls.enabled=false
        IngestTls tls = cert == null ? null : IngestTls.of(cert.privateKey(), cert.chain(), props.tls().engine());
        // blocks on the workers: their GC runs over the link, so a worker too old for the GC frames is refused at REGISTER
        int minVersion = dataMode == ClusterDataMode.WORKERS ? Register.GC_FRAMES_VERSION : Register.MIN_CLUSTER_VERSION;
        ClusterServer server = new ClusterServer(new ClusterServer.Settings(props.cluster().host(), props.cluster().port(), tls,
                version(build), minVersion),
                registry, tokens.getIfAvailable(() -> CoreConfiguration.NO_TOKEN_STORE), audit.getIfAvailable(() -> AuditLog.NONE),
                dedupLinks, gcDeltaLinks);
        if (dataMode == ClusterDataMode.WORKERS) {
            // a version 7 worker's counts mark lifts a catalog restore's counts fence, or fences counts this catalog cannot account for
            server.checkCountsWith(new RegistrationCountsFence(db));
        }
        // the workers' sealed logs, which a copy of a lost worker's range from the bucket is checked against
        SealedLogStore sealedLogs = new SealedLogStore(db);
        server.recordSealedLogs(sealedLogs::apply);
        server.answerTakeoverRecords(sealedLogs::part);
        // a worker's sweep freed blocks whose possession entries the master keeps: they go with its marks
        // (resolved at the first marks, not here: the data store is wired apart from the cluster port)
        server.forgetRecordsOfFreed((pbns, n) -> dataStore.getObject().possession().deleteAll(pbns, n));
        if ("cluster".equals(props.dedup().engine())) {
            // a worker's sweep freed blocks another worker's engine may hold (nearest mode): the master forwards its marks
            // what a worker whose link is down is owed waits here, so that it holds up no other worker's marks
            server.forwardStaleMarks(new StaleMarkForwarder(dedupLinks, registry, props.dedup().cluster().clusterMode(),
                    new OwedForgets(dir.root().resolve(OwedForgets.DIRECTORY))));
        }
        return server;
    }

    /** The registered workers' GC delta links: a bean of its own, as the dedup links, so that the GC does not need the cluster port. */
    @Bean
    @ConditionalOnProperty(name = ROLE, havingValue = "master")
    GcDeltaLinks gcDeltaLinks() {
        return new GcDeltaLinks();
    }

    /**
     * The registered workers' dedup links: a bean of its own so that the dedup index does not need the
     * cluster port (which needs the audit log, which needs GC, which needs the index).
     */
    @Bean
    @ConditionalOnProperty(name = ROLE, havingValue = "master")
    DedupLinks dedupLinks(HoldfastProperties props, MetadataDb db) {
        // with the workers' engine in use, ask each for its index size at registration: it opens their engines anyway;
        // the workers' index start-over marks are kept in the catalog's cluster column beside their records
        return new DedupLinks("cluster".equals(props.dedup().engine()), new ClusterStore(db));
    }

    /** Each worker's index size as last reported to this master. */
    @Bean
    @ConditionalOnProperty(name = ROLE, havingValue = "master")
    WorkerIndexMetrics workerIndexMetrics(DedupLinks dedupLinks) {
        return new WorkerIndexMetrics(dedupLinks);
    }

    @Bean
    @ConditionalOnProperty(name = ROLE, havingValue = "master")
    PortLifecycle clusterServerLifecycle(ClusterServer server) {
        return new PortLifecycle(server::start, server);
    }

    /**
     * The connector depends on the worker's range data and GC metadata, so Spring destroys the connector
     * (its links and their data threads) before it closes them.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = ROLE, havingValue = "worker")
    WorkerConnector workerConnector(HoldfastProperties props, DataDirectory dir, ObjectProvider<BuildProperties> build,
                                    ObjectProvider<LazyDedupWorker> dedup, WorkerRangeData rangeData, WorkerGcMetadata gcMetadata,
                                    GcConfiguration.GcProperties gc) {
        return worker(props, dir.root(), version(build), dedup.getIfAvailable(), rangeData, gcMetadata, sweepSettings(gc));
    }

    /**
     * The worker's range sweep settings: the node's {@code holdfast.gc.sweep-batch-chunks},
     * {@code compaction-threshold} and {@code compaction-max-bytes}, as the standalone GC's.
     */
    static WorkerRangeSweep.Settings sweepSettings(GcConfiguration.GcProperties gc) {
        try {
            return new WorkerRangeSweep.Settings(gc.sweepBatchChunks(), gc.compactionThreshold(), gc.compactionMaxBytes().toBytes());
        } catch (IllegalArgumentException e) {
            throw new ClusterSetupException(e.getMessage(), e);
        }
    }

    /**
     * The blocks of the worker's PBN range (data on workers), in {@code range-data} of its data
     * directory, stored and read by the master's data calls; opened at the first registration, over
     * the range the master assigns. The data logs' settings are the node's {@code holdfast.store.*}
     * (roll size, fsync policy, PBN reservation, free-space reserve): one setting per concept.
     * Ingest and restore use it with {@code holdfast.cluster.data=workers}; GC deltas go to
     * {@link #workerGcMetadata} beside it.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = ROLE, havingValue = "worker")
    WorkerRangeData workerRangeData(HoldfastProperties props, DataDirectory dir) {
        return rangeData(props, dir.root());
    }

    /** A worker's range data in {@code dataDir/range-data} with the node's data-log settings. */
    static WorkerRangeData rangeData(HoldfastProperties props, Path dataDir) {
        HoldfastProperties.Store s = props.store();
        Path d = dataDir.resolve(WorkerRangeData.DIRECTORY);
        // the directory and range given here are replaced by WorkerRangeData (range-data/data, the REGISTERED range)
        WorkerRangeData data = new WorkerRangeData(d, new DataStore.Settings(d.resolve("data"), s.logRollSize().toBytes(), s.fsync(),
                s.pbnReserveBatch(), s.minFreeSpace().toBytes()), archive(props));
        data.checkTakeoverContent(props.cluster().takeoverSha256());
        return data;
    }

    /**
     * Backend s3 on a worker: its range store archives to the node's {@code holdfast.store.s3.*} bucket
     * under its worker id and takeover epoch; null for backend local.
     */
    static WorkerRangeData.Archive archive(HoldfastProperties props) {
        return archive(props, true);
    }

    /**
     * As {@link #archive(HoldfastProperties)} for a reader that never uploads (a master's copies of
     * lost workers' ranges): it connects without the create-only probe, which writes to the bucket.
     */
    static WorkerRangeData.Archive readingArchive(HoldfastProperties props) {
        return archive(props, false);
    }

    private static WorkerRangeData.Archive archive(HoldfastProperties props, boolean probe) {
        if (!"s3".equals(props.store().backend())) {
            return null;
        }
        HoldfastProperties.S3 c = props.store().s3();
        S3Settings settings = S3Settings.of(c.endpoint(), c.region(), c.bucket(), c.prefix(), c.credentialsFile(), c.pathStyle())
                .withChecksumsWhenRequired(c.checksumsWhenRequired())
                .withRateLimits(c.maxReadRequestsPerSecond(), c.maxWriteRequestsPerSecond());
        return new WorkerRangeData.Archive(() -> probe ? S3ObjectStore.open(settings) : S3ObjectStore.connect(settings), c.cache(), syncWait(c.uploadStallTimeout(),
                props.cluster().lostAfter()));
    }

    /**
     * How long a worker's commit waits while no upload gets through: the upload-stall timeout, but at
     * most two thirds of {@code holdfast.cluster.lost-after} (set alike on master and workers), so that
     * the worker answers with the bucket's failure before the master's data call times out (which
     * would end the link's data calls and fail the backup as a lost worker instead).
     */
    static Duration syncWait(Duration stall, Duration lostAfter) {
        Duration cap = lostAfter.multipliedBy(2).dividedBy(3);
        return stall.compareTo(cap) < 0 ? stall : cap;
    }

    /**
     * The GC metadata of the worker's PBN range (GC deltas on the worker link), in {@code range-data/gc}
     * of its data directory, into which it logs the GC deltas the master routes to it; opened at the
     * first registration, over the range the master assigns. Its BOSC settings are the node's
     * {@code holdfast.gc.committers} and {@code holdfast.gc.fsync}, as the standalone GC's (GcConfiguration).
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = ROLE, havingValue = "worker")
    WorkerGcMetadata workerGcMetadata(GcConfiguration.GcProperties gc, DataDirectory dir, Clock holdfastClock) {
        return gcMetadata(gc, dir.root(), holdfastClock);
    }

    /** A worker's GC metadata in {@code dataDir/range-data/gc} with the node's BOSC settings and grace ({@code holdfast.gc.grace}). */
    static WorkerGcMetadata gcMetadata(GcConfiguration.GcProperties gc, Path dataDir, Clock clock) {
        return new WorkerGcMetadata(dataDir.resolve(WorkerRangeData.DIRECTORY).resolve("gc"), GcConfiguration.bosc(gc), gc.grace(), clock);
    }

    /**
     * The engine a worker serves the master's dedup calls with, in {@code dedup-worker} of its data
     * directory (the worker's own index; the blocks stay on the master), opened at the first call.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnExpression(WORKER_WITH_ENGINE)
    LazyDedupWorker workerDedupEngine(DataDirectory dir, DedupEngineConfiguration.SungemProperties sungem, Clock holdfastClock) {
        Path index = dir.root().resolve("dedup-worker");
        return new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index, sungem.toSettings(), holdfastClock));
    }

    /** Meters of the worker's dedup engine (the figures per worker of the cluster benchmark). */
    @Bean
    @ConditionalOnExpression(WORKER_WITH_ENGINE)
    WorkerDedupMetrics workerDedupMetrics(LazyDedupWorker workerDedupEngine) {
        return new WorkerDedupMetrics(workerDedupEngine);
    }

    /** A worker's REST: the endpoints over what it does not open answer 409 not-on-a-worker (after Spring Security). */
    @Bean
    @ConditionalOnProperty(name = ROLE, havingValue = "worker")
    FilterRegistrationBean<NotOnAWorkerFilter> notOnAWorker(ObjectMapper json, HoldfastProperties props) {
        FilterRegistrationBean<NotOnAWorkerFilter> r = new FilterRegistrationBean<>(new NotOnAWorkerFilter(json, props.cluster().master()));
        r.addUrlPatterns("/api/*");
        return r;
    }

    /** A worker's link from its settings; a setting that cannot work is a {@link ClusterSetupException} naming it. */
    static WorkerConnector worker(HoldfastProperties props, Path dataDir, String version) {
        return worker(props, dataDir, version, null, null, null);
    }

    /**
     * As {@link #worker(HoldfastProperties, Path, String)}, serving dedup calls with {@code dedup}, data
     * calls with {@code rangeData} and GC deltas with {@code gcMetadata} (null: none; the caller closes
     * them after the connector).
     */
    static WorkerConnector worker(HoldfastProperties props, Path dataDir, String version, LazyDedupWorker dedup,
                                  WorkerRangeData rangeData, WorkerGcMetadata gcMetadata) {
        return worker(props, dataDir, version, dedup, rangeData, gcMetadata, WorkerRangeSweep.Settings.DEFAULTS);
    }

    /** As above, the range sweeps with {@code sweep} (the node's GC settings: {@link #sweepSettings}). */
    static WorkerConnector worker(HoldfastProperties props, Path dataDir, String version, LazyDedupWorker dedup,
                                  WorkerRangeData rangeData, WorkerGcMetadata gcMetadata, WorkerRangeSweep.Settings sweep) {
        try {
            return checkedWorker(props, dataDir, version, dedup, rangeData, gcMetadata, sweep);
        } catch (IllegalArgumentException e) {
            throw new ClusterSetupException(e.getMessage(), e);
        }
    }

    private static WorkerConnector checkedWorker(HoldfastProperties props, Path dataDir, String version, LazyDedupWorker dedup,
                                                 WorkerRangeData rangeData, WorkerGcMetadata gcMetadata, WorkerRangeSweep.Settings sweep) {
        HoldfastProperties.Cluster c = props.cluster();
        String node = props.store().s3().node();
        if (node == null || node.isBlank()) {
            throw new IllegalArgumentException("holdfast.cluster.role=worker needs a node name: set holdfast.store.s3.node"
                    + " (unique per worker; the master keeps the worker's PBN range under it)");
        }
        if (!WorkerRegistry.NODE_NAME.matcher(node).matches()) {
            throw new IllegalArgumentException("holdfast.store.s3.node '" + node + "' cannot name a worker: use 1 to 64 letters, digits,"
                    + " '.', '_' or '-', starting with a letter or digit");
        }
        if ("exact".equals(props.dedup().engine())) { // the worker would have no engine for the master's dedup calls
            throw new IllegalArgumentException("holdfast.dedup.engine=exact cannot serve the master's dedup calls on a worker:"
                    + " leave holdfast.dedup.engine at its default (sungem) on workers");
        }
        int colon = c.master().lastIndexOf(':');
        int port;
        try {
            port = colon > 0 ? Integer.parseInt(c.master().substring(colon + 1)) : -1;
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("holdfast.cluster.master must be the master's cluster port as host:port (e.g."
                    + " master.example:7071), got '" + c.master() + "'");
        }
        if (c.tokenFile() == null || !Files.isReadable(c.tokenFile())) {
            throw new IllegalArgumentException("holdfast.cluster.token-file must name a readable file holding a token of role worker,"
                    + " got " + c.tokenFile() + "; an admin creates one (POST /api/v1/tokens with role worker) on the master");
        }
        MasterTrust trust = null;
        if (props.tls().enabled()) {
            if (!c.masterFingerprint().isBlank()) {
                trust = MasterTrust.pinned(CertificateFingerprint.parse(c.masterFingerprint()));
            } else if (c.masterCaCertificate() != null) {
                trust = MasterTrust.caCertificates(c.masterCaCertificate());
            } else {
                throw new IllegalArgumentException("a worker must know its master's certificate: set holdfast.cluster.master-fingerprint"
                        + " to the SHA-256 fingerprint the master logs at start, or holdfast.cluster.master-ca-certificate to a CA file");
            }
        }
        WorkerConnector connector = new WorkerConnector(new WorkerConnector.Settings(c.master().substring(0, colon), port, c.host(), node,
                c.tokenFile(), trust, props.tls().engine(), version, Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofSeconds(30)),
                new LoadProbe(dataDir), dedup, rangeData, gcMetadata, sweep);
        if (rangeData != null && "s3".equals(props.store().backend())) {
            // another node may take the range over from the bucket once the master declared this one lost
            MasterLease lease = new MasterLease(c.lostAfter());
            rangeData.leaseDeletes(lease);
            connector.reportHearing(lease);
        }
        return connector;
    }

    @Bean
    @ConditionalOnProperty(name = ROLE, havingValue = "worker")
    PortLifecycle workerConnectorLifecycle(WorkerConnector connector) {
        return new PortLifecycle(connector::start, connector);
    }

    private static String version(ObjectProvider<BuildProperties> build) {
        return "holdfast-server/" + (build.getIfAvailable() != null ? build.getIfAvailable().getVersion() : "0.1.0-SNAPSHOT");
    }
}
