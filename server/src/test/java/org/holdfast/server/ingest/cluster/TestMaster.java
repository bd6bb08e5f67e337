package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.MetadataDb;

/**
 * A master's cluster side for tests, started: the catalog on disk in {@code catalog}, real API
 * tokens in it, the registry on its {@code cluster} column and the cluster port (plain TCP, any
 * free port). Opening one again on the same directory is a master restart. We own the database and
 * the port; {@link #close()} closes the port first.
 */
final class TestMaster implements AutoCloseable {
    final MetadataDb db;
    final ApiTokens tokens;
    final ClusterStore store;
    WorkerRegistry registry;
    ClusterServer server;
    private final AuditLog audit;

    TestMaster(Path catalog, MembershipSettings settings, AuditLog audit) {
        db = MetadataDb.open(catalog);
        tokens = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE);
        store = new ClusterStore(db);
        registry = new WorkerRegistry(store, settings, Clock.systemUTC());
        this.audit = audit;
        server = new ClusterServer(new ClusterServer.Settings("127.0.0.1", 0, null, "test"), registry, tokens, audit);
        server.start();
    }

    /**
     * A master restart that keeps its port: the cluster port closes (every worker's link ends), and a new
     * registry and port open over the same catalog; the workers register again by themselves.
     */
    void restartOnSamePort() {
        int port = server.port();
        server.close();
        registry = new WorkerRegistry(store, registry.settings(), Clock.systemUTC());
        server = new ClusterServer(new ClusterServer.Settings("127.0.0.1", port, null, "test"), registry, tokens, audit);
        server.start();
    }

    /** A new worker token, as an admin issues one for a node to register with. */
    String workerToken() {
        return tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "t", "t").token();
    }

    /**
     * The link settings of a test node {@code node} registering here with the token in {@code tokenFile}:
     * plain TCP on loopback, a 5 s connect timeout, a reconnect backoff of 50 to 200 ms.
     */
    WorkerConnector.Settings linkSettings(String node, Path tokenFile) {
        return new WorkerConnector.Settings("127.0.0.1", server.port(), null, node, tokenFile, null, "auto", "test", Duration.ofSeconds(5),
                Duration.ofMillis(50), Duration.ofMillis(200));
    }

    @Override
    public void close() {
        server.close();
        db.close();
    }
}
