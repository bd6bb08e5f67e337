package org.holdfast.server.ingest.cluster;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.IngestTls;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;

/**
 * A master's cluster port over TLS (its catalog in {@code dir/catalog}) and worker nodes in this
 * JVM, each its own Sungem engine behind a {@link WorkerConnector} that pins the master's
 * certificate; started, and every worker's dedup link up. Opening it again on the same directory is
 * a restart: the workers keep their token, to which their nodes are bound. We own everything;
 * {@link #close()} closes the workers' links first, then the port, the engines and the catalog.
 */
public final class TlsWorkerNodes implements AutoCloseable {
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final List<WorkerConnector> connectors = new ArrayList<>();
    private final List<LocalDedupWorker> engines = new ArrayList<>();
    private final List<WorkerRangeData> rangeData = new ArrayList<>();
    private final ClusterServer server;
    private final WorkerRegistry registry;
    private final Path dir;
    private ServerCertificate cert;

    /** {@code count} workers, engine i in {@code dir/worker-i} with {@code settings} on {@code engineClock}. */
    public TlsWorkerNodes(Path dir, int count, SungemSettings settings, Clock engineClock) {
        this(dir, count, settings, engineClock, false);
    }

    /**
     * As above; with {@code rangeData} each node also serves its PBN range's data from
     * {@code dir/range-data-i} (data on workers), and every node's range store is up on the master.
     */
    public TlsWorkerNodes(Path dir, int count, SungemSettings settings, Clock engineClock, boolean rangeData) {
        this.dir = dir;
        try {
            MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
            opened.add(db::close);
            ApiTokens tokens = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE);
            cert = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
            registry = new WorkerRegistry(new ClusterStore(db), new MembershipSettings(Duration.ofMillis(500),
                    Duration.ofSeconds(10), Duration.ofSeconds(20), MembershipSettings.DEFAULT_FIRST_PBN,
                    MembershipSettings.DEFAULT_RANGE_SIZE), Clock.systemUTC());
            server = new ClusterServer(new ClusterServer.Settings("127.0.0.1", 0, IngestTls.of(cert.privateKey(), cert.chain(), "auto"),
                    "test"), registry, tokens, AuditLog.NONE);
            server.start();
            opened.add(0, server::close);
            Path tokenFile = dir.resolve("worker.token");
            if (!Files.exists(tokenFile)) {
                Files.writeString(tokenFile, tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "t", "t")
                        .token());
            }
            for (int i = 0; i < count; i++) {
                LocalDedupWorker engine = new LocalDedupWorker(0, dir.resolve("worker-" + i), settings, engineClock);
                engines.add(engine);
                opened.add(engine::close);
                WorkerConnector w = connector(i, engine, rangeData(dir, i, rangeData));
                w.start();
                connectors.add(w);
                opened.add(0, w::close);
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> server.dedupLinks().workers().size() == count);
            for (int i = 0; rangeData && i < count; i++) {
                int k = i;
                await().atMost(Duration.ofSeconds(20)).until(() -> server.rangeStores().upAt(k) != null);
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
    }

    /** A link for node {@code i} (named "w" + i) over {@code engine} and {@code data}, not started. */
    private WorkerConnector connector(int i, LocalDedupWorker engine, WorkerRangeData data) {
        return new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", server.port(), null, "w" + i, dir.resolve("worker.token"),
                MasterTrust.pinned(cert.fingerprint()), "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                Duration.ofMillis(200)), new LoadProbe(dir), new LazyDedupWorker(0, () -> engine), data);
    }

    /**
     * Closes node {@code i}'s link and starts a new one for the same node (its engine and range data):
     * the worker registers again under its id, as after a restart or a reconnect. Returns at once.
     */
    public void reconnect(int i) {
        connectors.get(i).close();
        WorkerConnector w = connector(i, engines.get(i), rangeData.isEmpty() ? null : rangeData.get(i));
        w.start();
        connectors.set(i, w);
        opened.add(0, w::close);
    }

    /** Node i's range data (opened at its registration), or null without range data. */
    private WorkerRangeData rangeData(Path dir, int i, boolean on) {
        if (!on) {
            return null;
        }
        WorkerRangeData d = new WorkerRangeData(dir.resolve("range-data-" + i),
                new DataStore.Settings(dir.resolve("unused"), 1L << 20, FsyncPolicy.COMMIT, 64, 0));
        rangeData.add(d);
        opened.add(d::close);
        return d;
    }

    /** The nodes' range data, in the order the nodes were made (empty without range data). */
    public List<WorkerRangeData> rangeData() {
        return rangeData;
    }

    /** The master's side of the links up, numbered 0..n-1 in worker-id order. */
    public List<RemoteDedupWorker> workers() {
        return server.dedupLinks().workers();
    }

    /** The workers' engines, in the order the nodes were made (not the master's numbering). */
    public List<LocalDedupWorker> engines() {
        return engines;
    }

    /** Node {@code i}'s link to the master (closing it ends the link). */
    public WorkerConnector connector(int i) {
        return connectors.get(i);
    }

    public ClusterServer server() {
        return server;
    }

    public WorkerRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        for (AutoCloseable c : opened) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        opened.clear();
    }
}
