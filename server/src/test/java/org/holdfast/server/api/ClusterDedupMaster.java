package org.holdfast.server.api;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A master in this JVM whose dedup engine is its workers' ({@code holdfast.dedup.engine=cluster}),
 * REST and cluster port in plain TCP on loopback with short heartbeat timings: the API tests of
 * the workers' indexes start one and connect workers of their own.
 */
final class ClusterDedupMaster implements AutoCloseable {
    final ConfigurableApplicationContext ctx;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** One running with its data directory in {@code dataDir}, with a client of its REST API. */
    ClusterDedupMaster(Path dataDir) {
        ctx = start(dataDir);
        port = port(ctx);
    }

    /** A REST call without a body. */
    HttpResponse<String> call(String method, String path, String token) {
        return RestCalls.call(http, port, method, path, null, token);
    }

    /** A REST call with a JSON body. */
    HttpResponse<String> call(String method, String path, String body, String token) {
        return RestCalls.call(http, port, method, path, body, token);
    }

    /** Where workers connect. */
    int clusterPort() {
        return ctx.getBean(ClusterServer.class).port();
    }

    @Override
    public void close() {
        ctx.close();
    }

    /** Starts it with its data directory in {@code dataDir}. */
    static ConfigurableApplicationContext start(Path dataDir) {
        return new SpringApplicationBuilder(HoldfastServer.class).run("--holdfast.data-dir=" + dataDir, "--server.port=0",
                "--server.address=127.0.0.1", "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0",
                "--holdfast.tls.enabled=false", "--holdfast.store.min-free-space=0", "--spring.main.banner-mode=off",
                "--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=0",
                "--holdfast.cluster.heartbeat-interval=200ms", "--holdfast.cluster.late-after=1s", "--holdfast.cluster.lost-after=3s",
                "--holdfast.dedup.engine=cluster", "--holdfast.dedup.sungem.u-segment=256");
    }

    /** The REST port of {@code ctx}. */
    static int port(ConfigurableApplicationContext ctx) {
        return Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
    }
}
