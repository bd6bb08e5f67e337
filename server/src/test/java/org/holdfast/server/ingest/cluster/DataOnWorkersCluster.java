package org.holdfast.server.ingest.cluster;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A master with {@code holdfast.cluster.data=workers} and two workers as Spring contexts in this JVM,
 * over their real ports (plain TCP, as the data-on-workers tests run them) and RocksDB under one
 * directory: the harness of the data-on-workers end-to-end tests. Workers and master can be stopped
 * and started again on their directories; {@link #close()} closes whatever runs.
 */
public final class DataOnWorkersCluster implements AutoCloseable {
    /** The block size of the tests' backups. */
    public static final int BS = 4096;

    /** Settings of all three nodes, and of the master alone. */
    public record Options(List<String> all, List<String> master) {
    }

    /** GC tests: a backup's protection ends 1 ms after it (grace), the master keeps one snapshot per volume; cycles on demand. */
    public static final Options GC = new Options(List.of("--holdfast.gc.grace=1ms"), List.of("--holdfast.gc.default-retention=keep-last=1"));
    /** Verify tests: no scheduled verify, no GC retention. */
    public static final Options VERIFY = new Options(List.of("--holdfast.verify.schedule=0", "--holdfast.verify.window=0"), List.of());

    private final Path dir;
    private final Options options;
    private final List<String> nodes;
    private final int clusterPort = TestPorts.claim();
    private final List<ConfigurableApplicationContext> workers = new ArrayList<>();
    private ConfigurableApplicationContext master;
    private Path tokenFile;

    /** Not started: the master in {@code dir/master}, worker {@code nodes[i]} in {@code dir/nodes[i]}. */
    public DataOnWorkersCluster(Path dir, Options options, String... nodes) {
        this.dir = dir;
        this.options = options;
        this.nodes = List.of(nodes);
    }

    /** Starts the master, issues the workers' token, starts every worker and waits until all are up on the master. */
    public DataOnWorkersCluster start() {
        startMaster();
        startWorkers();
        return this;
    }

    private String[] args(Path nodeDir, List<String> own) {
        List<String> a = new ArrayList<>(List.of("--holdfast.data-dir=" + nodeDir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--holdfast.tls.enabled=false", "--spring.main.banner-mode=off", "--holdfast.gc.interval=1h"));
        a.addAll(options.all());
        a.addAll(own);
        return a.toArray(String[]::new);
    }

    /** Starts the master on its directory (again, after {@link #stopMaster()}); the first start writes the workers' token file. */
    public void startMaster() {
        List<String> own = new ArrayList<>(List.of("--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1",
                "--holdfast.cluster.port=" + clusterPort, "--holdfast.cluster.heartbeat-interval=200ms",
                "--holdfast.dedup.engine=cluster", "--holdfast.cluster.data=workers"));
        own.addAll(options.master());
        master = new SpringApplicationBuilder(HoldfastServer.class).run(args(dir.resolve("master"), own));
        if (tokenFile == null) {
            String token = master.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("workers", Role.WORKER, VolumeScope.ALL,
                    null, null), "test", "local").token();
            try {
                tokenFile = Files.writeString(dir.resolve("worker.token"), token + "\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Closes the master's context. */
    public void stopMaster() {
        if (master != null) {
            master.close();
            master = null;
        }
    }

    /** Starts every worker on its directory and waits until each one's range store and GC guard are up on the master. */
    public void startWorkers() {
        for (String node : nodes) {
            workers.add(new SpringApplicationBuilder(HoldfastServer.class).run(args(dir.resolve(node),
                    List.of("--holdfast.cluster.role=worker", "--holdfast.cluster.host=127.0.0.1",
                            "--holdfast.cluster.master=127.0.0.1:" + clusterPort, "--holdfast.cluster.token-file=" + tokenFile,
                            "--holdfast.store.s3.node=" + node))));
        }
        ClusterServer cluster = master.getBean(ClusterServer.class);
        await().atMost(Duration.ofSeconds(60)).until(() -> workers.stream().allMatch(w -> {
            WorkerRecord a = w.getBean(WorkerConnector.class).status().assignment();
            return a != null && cluster.rangeStores().up(a.workerId()) != null && cluster.gcGuards().up(a.workerId()) != null;
        }));
    }

    /** Closes every worker's context. */
    public void stopWorkers() {
        workers.forEach(ConfigurableApplicationContext::close);
        workers.clear();
    }

    /** The master's context while it runs. */
    public ConfigurableApplicationContext master() {
        return master;
    }

    /** The running workers' contexts, in node order (empty while stopped). */
    public List<ConfigurableApplicationContext> workers() {
        return Collections.unmodifiableList(workers);
    }

    /** The node names, in order. */
    public List<String> nodes() {
        return nodes;
    }

    /** The data directory of node {@code i}. */
    public Path nodeDir(int i) {
        return dir.resolve(nodes.get(i));
    }

    /** The directory holding every node's. */
    public Path dir() {
        return dir;
    }

    /** The master's id of running worker {@code i}. */
    public long workerId(int i) {
        return workers.get(i).getBean(WorkerConnector.class).status().assignment().workerId();
    }

    /** An agent connected (HELLO done) to the master's ingest port. */
    public AgentDriver agent() {
        AgentDriver a = new AgentDriver(master.getBean(IngestServer.class).port(), TestTokens.issue(master, Role.AGENT));
        a.hello();
        return a;
    }

    /** Waits until every running worker acknowledged each GC delta the master routed to it. */
    public void awaitDeltasDelivered() {
        GcDeltaSenders senders = master.getBean(GcDeltaSenders.class);
        for (int i = 0; i < workers.size(); i++) {
            long id = workerId(i);
            await().atMost(Duration.ofSeconds(20)).until(() -> senders.pending(id) == 0);
        }
    }

    /** Runs the master's GC cycle now. */
    public GcService.CycleReport gcCycle() {
        return master.getBean(GcService.class).runCycle();
    }

    /** {@code blocks} blocks of random bytes from {@code seed}. */
    public static byte[] random(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Override
    public void close() {
        stopWorkers();
        stopMaster();
    }
}
