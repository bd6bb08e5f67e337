package org.holdfast.server.ingest.cluster;

import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.MetadataDb;

/**
 * For GC tests outside this package: a master's cluster side on a catalog the test opened (the
 * same one its GC service uses, so the outbox is the GC's), its GC delta senders, and worker
 * processes in this JVM, each with its GC metadata (kept across its links) and a connector over
 * real sockets. Workers get ranges {@code [first + i × size, first + (i + 1) × size)} in start
 * order. We own the port, the senders, the connectors and the workers' GC metadata, not the catalog.
 */
public final class GcRoutingCluster implements AutoCloseable {
    private static final BoscSettings BOSC = BoscSettings.defaults().withCommitters(1);

    private final Path dir;
    private final WorkerRegistry registry;
    private final ClusterServer server;
    private final GcDeltaSenders senders;
    private final Path tokenFile;
    private final Worker[] workers;

    /** One worker process: its GC metadata and its link. */
    private static final class Worker {
        final String name;
        WorkerGcMetadata gc;
        WorkerConnector link;

        Worker(String name) {
            this.name = name;
        }
    }

    /** Starts the master side over {@code db} and {@code count} workers (each registered and linked before this returns). */
    public GcRoutingCluster(Path dir, MetadataDb db, int count, long first, long size) {
        this.dir = dir;
        ApiTokens tokens = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE);
        // heartbeats every second, lost after 10 s: a loaded machine does not cut the links
        registry = new WorkerRegistry(new ClusterStore(db), new MembershipSettings(Duration.ofSeconds(1), Duration.ofSeconds(3),
                Duration.ofSeconds(10), first, size), Clock.systemUTC());
        GcDeltaLinks links = new GcDeltaLinks();
        server = new ClusterServer(new ClusterServer.Settings("127.0.0.1", 0, null, "test"), registry, tokens, AuditLog.NONE,
                new DedupLinks(), links);
        server.start();
        senders = new GcDeltaSenders(new PbnRange(1, first), registry::workers, links, new GcOutbox(db));
        tokenFile = dir.resolve("worker.token");
        try {
            Files.createDirectories(dir);
            Files.writeString(tokenFile, tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "t", "t").token());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        workers = new Worker[count];
        for (int i = 0; i < count; i++) {
            workers[i] = new Worker("w" + (i + 1));
            startWorker(i); // one after the other: w1 gets the first range
        }
    }

    /** The carriers and the routing a master's GC service opens with. */
    public GcDeltaSenders senders() {
        return senders;
    }

    /** Worker {@code i}'s stable id. */
    public long workerId(int i) {
        return workers[i].link.status().assignment().workerId();
    }

    /** Worker {@code i}'s range. */
    public PbnRange range(int i) {
        return workers[i].link.status().assignment().range();
    }

    /** Worker {@code i}'s GC metadata (its GMA and BOSC log in {@code <dir>/w<i+1>/range-data/gc}). */
    public BoscPipeline workerGc(int i) {
        return workers[i].gc.pipeline();
    }

    /** Worker {@code i}'s link to the master, once registered; the process keeps its GC metadata. */
    public void startWorker(int i) {
        Worker w = workers[i];
        if (w.gc == null) {
            w.gc = new WorkerGcMetadata(dir.resolve(w.name).resolve("range-data").resolve("gc"), BOSC);
        }
        w.link = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", server.port(), null, w.name, tokenFile, null, "auto",
                "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)), new LoadProbe(dir), null, null, w.gc);
        w.link.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> w.link.status().connected() && w.link.status().assignment() != null
                && server.gcDeltas().up(w.link.status().assignment().workerId()) != null);
    }

    /** Worker {@code i}'s link closes (its process keeps running, GC metadata open); the master sees it lost. */
    public void stopWorker(int i) {
        Worker w = workers[i];
        long id = workerId(i);
        w.link.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> server.gcDeltas().up(id) == null);
    }

    /** Stops the senders, the port, the workers' links, then their GC metadata (flushed). */
    @Override
    public void close() {
        senders.close();
        server.close();
        for (Worker w : workers) {
            if (w == null) {
                continue;
            }
            if (w.link != null) {
                w.link.close();
            }
            if (w.gc != null) {
                w.gc.close();
            }
        }
    }
}
