package org.holdfast.server.app;

import java.nio.file.Path;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.LogCache;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/** Everything under {@code holdfast.*} in application.yml, with the defaults of an embedded single-node appliance. */
@ConfigurationProperties("holdfast")
public record HoldfastProperties(
        @DefaultValue("./holdfast-data") Path dataDir,
        @DefaultValue Ingest ingest,
        @DefaultValue Dedup dedup,
        @DefaultValue Store store,
        @DefaultValue Tls tls,
        @DefaultValue Security security,
        @DefaultValue Cluster cluster) {

    /** The agent port. {@code segmentEntries} is U_segment, the longest input segment given to the engine. */
    public record Ingest(
            @DefaultValue("0.0.0.0") String host,
            @DefaultValue("7070") int port,
            @DefaultValue("4") int sessionThreads,
            @DefaultValue("4096") int segmentEntries,
            @DefaultValue("8") int maxQueuedFrames,
            @DefaultValue("64MB") DataSize maxQueuedBytes,
            @DefaultValue("10m") java.time.Duration idleTimeout,
            @DefaultValue("64KB") DataSize beforeHelloBytes,
            @DefaultValue("256MB") DataSize maxInflightBytes,
            @DefaultValue("64KB") DataSize minFrameRate,
            @DefaultValue("30s") java.time.Duration frameGrace,
            @DefaultValue("1024") int maxConnections,
            @DefaultValue("64") int maxConnectionsPerSource,
            @DefaultValue("64TB") DataSize maxVolumeSize,
            @DefaultValue("262144") int sessionMemoryEntries) {

        /** The resource limits of the agent port (docs/operations.md, "Agent port limits"); {@code minFrameRate} is per second. */
        public org.holdfast.server.ingest.IngestLimits limits() {
            return new org.holdfast.server.ingest.IngestLimits(Math.toIntExact(beforeHelloBytes.toBytes()), maxInflightBytes.toBytes(),
                    minFrameRate.toBytes(), frameGrace, maxConnections, maxConnectionsPerSource, maxVolumeSize.toBytes());
        }
    }

    /**
     * {@code engine}: {@code exact} (full on-disk index, the baseline), {@code sungem}, or {@code cluster}
     * (preview: the master/worker engine of thesis 7.2; on a master its workers are the registered
     * worker processes, standalone {@code cluster.workers} in-process workers that measure the algorithm).
     * {@code shadowExact} runs the exact index beside Sungem on the same stream (holdfast.dedup.efficiency).
     */
    public record Dedup(@DefaultValue("sungem") String engine, @DefaultValue DedupCluster cluster,
            @DefaultValue("false") boolean shadowExact) {
        public Dedup {
            if (!"sungem".equals(engine) && !"exact".equals(engine) && !"cluster".equals(engine)) {
                throw new IllegalArgumentException("holdfast.dedup.engine must be 'sungem', 'exact' or 'cluster', not '" + engine + "'");
            }
        }
    }

    /**
     * {@code holdfast.dedup.cluster.*}, read with engine {@code cluster}: how many in-process workers
     * (each a Sungem engine with the {@code holdfast.dedup.sungem.*} settings in
     * {@code <data-dir>/cluster/worker-<i>}), and {@code mode}: {@code nearest} (broadcast, misses to the
     * worker of the nearest hit; thesis 7.2.1-7.2.3) or {@code hash} (split by fingerprint hash; 7.2.5);
     * and, in nearest mode, {@code broadcast}: {@code two-phase} (sampled fingerprints to every worker
     * first, the whole segment only to workers with a candidate container) or {@code full}. Both apply
     * to in-process and to remote workers.
     */
    public record DedupCluster(@DefaultValue("4") int workers, @DefaultValue("nearest") String mode,
            @DefaultValue("two-phase") String broadcast) {
        /** More workers than this in one process measure nothing a smaller count does not. */
        static final int MAX_WORKERS = 64;

        public DedupCluster {
            if (workers < 1 || workers > MAX_WORKERS) {
                throw new IllegalArgumentException("holdfast.dedup.cluster.workers must be 1 to " + MAX_WORKERS + ", not " + workers);
            }
            org.holdfast.server.engine.ClusterMode.parse(mode, "holdfast.dedup.cluster.mode");
            org.holdfast.server.engine.ClusterBroadcast.parse(broadcast, "holdfast.dedup.cluster.broadcast");
        }

        /** The broadcast as the engine names it. */
        public org.holdfast.server.engine.ClusterBroadcast clusterBroadcast() {
            return org.holdfast.server.engine.ClusterBroadcast.parse(broadcast, "holdfast.dedup.cluster.broadcast");
        }

        /** The mode as the engine names it. */
        public org.holdfast.server.engine.ClusterMode clusterMode() {
            return org.holdfast.server.engine.ClusterMode.parse(mode, "holdfast.dedup.cluster.mode");
        }
    }

    /**
     * The data logs: roll size, when to fsync, PBNs reserved per batch, free space kept in reserve.
     * {@code simulatedDiskSize} (tests only, 0 = off) makes the store believe its data directory lies
     * on a disk of that size, for disk-full tests where no small file system can be mounted.
     */
    public record Store(
            @DefaultValue("256MB") DataSize logRollSize,
            @DefaultValue("commit") FsyncPolicy fsync,
            @DefaultValue("65536") int pbnReserveBatch,
            @DefaultValue("256MB") DataSize minFreeSpace,
            @DefaultValue("0B") DataSize simulatedDiskSize,
            @DefaultValue("local") String backend,
            @DefaultValue S3 s3) {
        public Store {
            if (!"local".equals(backend) && !"s3".equals(backend)) {
                throw new IllegalArgumentException("holdfast.store.backend must be 'local' or 's3', not '" + backend + "'");
            }
        }
    }

    /**
     * Backend {@code s3} (preview, docs/operations.md "Object store (preview)"): where sealed data logs
     * are uploaded. {@code credentialsFile} holds {@code access-key} and {@code secret-key}; without it
     * the environment's {@code AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY} are used. {@code node}
     * names this server in object keys (default: a random id kept in the catalog). {@code checksumsWhenRequired} is
     * needed by Ceph RGW and Garage. {@code maxReadRequestsPerSecond} (GET, HEAD, LIST) and
     * {@code maxWriteRequestsPerSecond} (PUT, DELETE) cap the request rate; 0 is unlimited.
     * {@code cacheSize} bounds the local disk the uploaded logs and cached
     * ranges take (least recently used evicted); {@code readAhead} fetches a restore's ranges on
     * {@code readAheadThreads} threads up to {@code readAheadDepth} bytes ahead of the writer. A catalog
     * backup waits for the data log uploads until none got through for {@code uploadStallTimeout}.
     */
    public record S3(
            java.net.URI endpoint,
            @DefaultValue("us-east-1") String region,
            String bucket,
            @DefaultValue("") String prefix,
            Path credentialsFile,
            @DefaultValue("true") boolean pathStyle,
            @DefaultValue("true") boolean checksumsWhenRequired,
            @DefaultValue("") String node,
            @DefaultValue("0") double maxReadRequestsPerSecond,
            @DefaultValue("0") double maxWriteRequestsPerSecond,
            @DefaultValue("10GB") DataSize cacheSize,
            @DefaultValue("true") boolean readAhead,
            @DefaultValue("4") int readAheadThreads,
            @DefaultValue("64MB") DataSize readAheadDepth,
            @DefaultValue("10m") java.time.Duration uploadStallTimeout) {
        /** Below this the cache holds too few 1 MiB ranges for a restore's read-ahead (it takes at most half). */
        static final long MIN_CACHE_BYTES = 64L << 20;

        public S3 {
            if (cacheSize.toBytes() < MIN_CACHE_BYTES) {
                throw new IllegalArgumentException("holdfast.store.s3.cache-size must be at least 64MB, got " + cacheSize);
            }
            if (uploadStallTimeout.isNegative() || uploadStallTimeout.isZero()) {
                throw new IllegalArgumentException("holdfast.store.s3.upload-stall-timeout must be positive (for example 10m), got "
                        + uploadStallTimeout);
            }
        }

        /** The local cache's settings (1 MiB ranges). */
        public LogCache.Settings cache() {
            return new LogCache.Settings(cacheSize.toBytes(), 1 << 20, readAhead, readAheadThreads,
                    readAheadDepth.toBytes());
        }
    }

    /**
     * TLS on both ports. Off only for labs and benchmarks. With no certificate configured the server
     * makes a self-signed one in {@code <data-dir>/tls} at first start. {@code certificate} and
     * {@code privateKey} are PEM files; {@code keystore} is a PKCS#12 file (with {@code keystorePassword}). {@code engine} picks the
     * agent port's TLS implementation: auto (OpenSSL where netty-tcnative loads, else the JDK's), openssl or jdk.
     */
    public record Tls(
            @DefaultValue("true") boolean enabled,
            Path certificate,
            Path privateKey,
            Path keystore,
            String keystorePassword,
            @DefaultValue("auto") String engine) {
    }

    /** Logins: how long a console session lasts, and how many failed logins a user or an address may make per minute. */
    public record Security(
            @DefaultValue("12h") java.time.Duration sessionTimeout,
            @DefaultValue("5") int failedLoginsPerMinute) {
    }

    /**
     * Master/worker mode (preview, docs/operations.md "Master/worker mode (preview)"). {@code role}:
     * standalone (default, nothing changes), master or worker. A master listens for workers on
     * {@code host}:{@code port} (TLS with the server certificate when {@code holdfast.tls.enabled}).
     * A worker connects from {@code host} (0.0.0.0: any local address) to {@code master}
     * (host:port), checks its certificate against
     * {@code masterFingerprint} (SHA-256, as the master logs it) or {@code masterCaCertificate} (PEM),
     * and presents the token of role worker in {@code tokenFile}; its node name is
     * {@code holdfast.store.s3.node}. Heartbeats every {@code heartbeatInterval}; a worker silent for
     * {@code lateAfter} is late, for {@code lostAfter} lost. Worker {@code n} owns the PBNs
     * {@code [2^48 + (n-1) * pbnRangeSize, 2^48 + n * pbnRangeSize)}. One worker token registers at
     * most {@code maxNodesPerToken} node names (each node is bound to the token that first registered it).
     * {@code takeoverCheck}: {@code sha256} or {@code size}, what a worker's takeover checks before it claims the range.
     */
    public record Cluster(
            @DefaultValue("standalone") String role,
            @DefaultValue("0.0.0.0") String host,
            @DefaultValue("7071") int port,
            @DefaultValue("") String master,
            @DefaultValue("") String masterFingerprint,
            Path masterCaCertificate,
            Path tokenFile,
            @DefaultValue("2s") java.time.Duration heartbeatInterval,
            @DefaultValue("6s") java.time.Duration lateAfter,
            @DefaultValue("15s") java.time.Duration lostAfter,
            @DefaultValue("1099511627776") long pbnRangeSize,
            @DefaultValue("16") int maxNodesPerToken,
            @DefaultValue("master") String data,
            @DefaultValue("sha256") String takeoverCheck) {
        public Cluster {
            org.holdfast.server.cluster.ClusterRole.parse(role); // refuses a misspelt role at start
            ClusterDataMode.parse(data); // and a misspelt data mode
            if (!"sha256".equals(takeoverCheck) && !"size".equals(takeoverCheck)) {
                throw new IllegalArgumentException("holdfast.cluster.takeover-check must be 'sha256' (the default: a takeover reads"
                        + " every recorded log before it claims the range) or 'size' (sizes only before the claim), not '"
                        + takeoverCheck + "'");
            }
        }

        /** Whether a takeover reads every recorded log through SHA-256 before it claims the range ({@code takeover-check}). */
        public boolean takeoverSha256() {
            return "sha256".equals(takeoverCheck);
        }

        /** The role as a type. */
        public org.holdfast.server.cluster.ClusterRole clusterRole() {
            return org.holdfast.server.cluster.ClusterRole.parse(role);
        }

        /** The membership rules a master applies. */
        public org.holdfast.server.cluster.MembershipSettings membership() {
            return new org.holdfast.server.cluster.MembershipSettings(heartbeatInterval, lateAfter, lostAfter,
                    org.holdfast.server.cluster.MembershipSettings.DEFAULT_FIRST_PBN, pbnRangeSize, maxNodesPerToken);
        }
    }
}
