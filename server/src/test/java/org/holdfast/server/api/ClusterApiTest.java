package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.RegistrationRefusedException;
import org.holdfast.server.cluster.WorkerCapacity;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.tls.ServerCertificate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code /api/v1/cluster} on a master (role master, TLS on): a worker token made over REST, a worker
 * registering over the TLS cluster port with the pinned certificate, listed up with its range; a
 * worker token reaches no REST endpoint; an admin's reset of a takeover fence.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterApiTest {
    private static final WorkerCapacity FENCE_CAP = new WorkerCapacity(2, 1L << 30, 1L << 40);
    private static final String FENCE_TOKEN_ID = "00000000000000a1";
    @TempDir
    static Path data;
    private static ConfigurableApplicationContext ctx;
    private static HttpClient http;
    private static int port;
    private static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void start() throws Exception {
        ctx = new SpringApplicationBuilder(HoldfastServer.class).run("--holdfast.data-dir=" + data.resolve("master"), "--server.port=0",
                "--server.address=127.0.0.1", "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0",
                "--holdfast.tls.enabled=false", // plain REST and cluster port; TLS on it: WorkerConnectorTest, ClusterProcessTest
                "--holdfast.store.min-free-space=0", "--spring.main.banner-mode=off", "--holdfast.cluster.role=master",
                "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=0", "--holdfast.cluster.heartbeat-interval=200ms",
                "--holdfast.cluster.late-after=1s", "--holdfast.cluster.lost-after=3s");
        port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (ctx != null) {
            ctx.close();
        }
    }

    private static HttpResponse<String> call(String method, String path, String token, String body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token);
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        return http.send(b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void workers_registeredWorker_isListedUpWithItsRangeAndLoad() throws Exception {
        String admin = TestTokens.issue(ctx, Role.ADMIN);
        HttpResponse<String> made = call("POST", "/api/v1/tokens", admin, "{\"name\":\"worker-1\",\"role\":\"worker\"}");
        assertThat(made.statusCode()).as(made.body()).isEqualTo(201);
        String workerToken = JSON.readTree(made.body()).get("token").asText();
        assertThat(JSON.readTree(made.body()).get("info").get("role").asText()).isEqualTo("worker");
        Path tokenFile = Files.writeString(data.resolve("worker.token"), workerToken);

        int clusterPort = ctx.getBean(ClusterServer.class).port();
        assertThat(ctx.getBeanProvider(ServerCertificate.class).getIfAvailable()).isNull();
        // TLS is off on this master (holdfast.tls.enabled=false), so the worker connects plain; TLS is tested in WorkerConnectorTest
        try (WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", clusterPort, "127.0.0.1", "w-api", tokenFile,
                (MasterTrust) null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)),
                new LoadProbe(data))) {
            w.start();
            await().atMost(Duration.ofSeconds(15)).until(() -> w.status().connected());
            // the load the listing shows comes with the first heartbeat (sent at once after REGISTERED): wait for it
            // rather than for a fixed time, which a loaded machine can outlast
            await().atMost(Duration.ofSeconds(15)).until(() -> JSON.readTree(call("GET", "/api/v1/cluster/workers", admin, null).body())
                    .get(0).get("heapMaxBytes").asLong() > 0);
            for (Role r : new Role[] {Role.VIEWER, Role.OPERATOR, Role.ADMIN}) {
                HttpResponse<String> list = call("GET", "/api/v1/cluster/workers", TestTokens.issue(ctx, r), null);
                assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
                JsonNode one = JSON.readTree(list.body()).get(0);
                assertThat(one.get("id").asLong()).isEqualTo(1);
                assertThat(one.get("nodeName").asText()).isEqualTo("w-api");
                assertThat(one.get("state").asText()).isEqualTo("up");
                assertThat(one.get("epoch").asLong()).isEqualTo(1);
                assertThat(one.get("pbnFirst").asText()).isEqualTo(Long.toString(MembershipSettings.DEFAULT_FIRST_PBN));
                assertThat(one.get("pbnLimit").asText()).isEqualTo(Long.toString(MembershipSettings.DEFAULT_FIRST_PBN
                        + MembershipSettings.DEFAULT_RANGE_SIZE));
                assertThat(one.get("address").asText()).startsWith("127.0.0.1:");
                assertThat(one.get("lastHeartbeat").asText()).endsWith("Z");
                assertThat(one.get("heapMaxBytes").asLong()).isPositive();
                // this master's engine is not the workers' (sungem): it never asked the worker, so the index size is unknown
                assertThat(one.get("indexEntries").isNull()).isTrue();
                assertThat(one.get("indexReportedAt").isNull()).isTrue();
                // the token a worker is bound to is for admins' eyes: it names what a thief would need
                assertThat(one.get("tokenId").isNull()).isEqualTo(r != Role.ADMIN);
                assertThat(one.get("tokenName").isNull()).isEqualTo(r != Role.ADMIN);
                if (r == Role.ADMIN) {
                    assertThat(one.get("tokenId").asText())
                            .isEqualTo(org.holdfast.server.security.ApiTokens.idOf(workerToken).orElseThrow());
                    assertThat(one.get("tokenName").asText()).isEqualTo("worker-1");
                }
            }

            JsonNode self = JSON.readTree(call("GET", "/api/v1/cluster", TestTokens.issue(ctx, Role.VIEWER), null).body());
            assertThat(self.get("role").asText()).isEqualTo("master");
            assertThat(self.get("clusterAddress").asText()).isEqualTo("127.0.0.1:0");
            assertThat(self.get("workers").get("up").asInt()).isEqualTo(1);
            assertThat(self.get("registration").isNull()).isTrue();

            HttpResponse<String> metrics = call("GET", "/actuator/prometheus", TestTokens.issue(ctx, Role.VIEWER), null);
            assertThat(metrics.body()).contains("holdfast_cluster_workers{state=\"up\"} 1.0")
                    .contains("holdfast_cluster_workers{state=\"lost\"} 0.0").contains("holdfast_cluster_registered 0.0")
                    .contains("holdfast_cluster_worker_index_entries{worker=\"1\"} NaN"); // registered, never asked

            // the worker's token is for the cluster port only
            assertThat(call("GET", "/api/v1/cluster", workerToken, null).statusCode()).isEqualTo(403);
            assertThat(call("GET", "/api/v1/volumes", workerToken, null).statusCode()).isEqualTo(403);

            // a connected worker cannot be removed
            HttpResponse<String> busy = call("DELETE", "/api/v1/cluster/workers/1", admin, null);
            assertThat(busy.statusCode()).as(busy.body()).isEqualTo(409);
            assertThat(JSON.readTree(busy.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:worker-connected");
            assertThat(JSON.readTree(busy.body()).get("detail").asText()).contains("stop the worker first");
            // nor replaced
            HttpResponse<String> live = call("POST", "/api/v1/cluster/workers/1/replace", admin, "{\"node\":\"w-api-2\"}");
            assertThat(live.statusCode()).as(live.body()).isEqualTo(409);
            assertThat(JSON.readTree(live.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:worker-connected");

            // last while connected: a rebind ends the worker's connection on the old token at its next heartbeat
            rebind_workerToAnotherWorkerToken_onlyAValidWorkerTokenOfAnAdmin(admin, workerToken, w);
            // bound to its file's token again, it comes back at epoch 2; it must be back before it stops, or its
            // REGISTER may reach the master after the stop and hold the worker connected while the test removes it
            await().atMost(Duration.ofSeconds(15)).until(() -> w.status().connected() && w.status().assignment().epoch() == 2);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> JSON.readTree(call("GET", "/api/v1/cluster/workers",
                TestTokens.issue(ctx, Role.VIEWER), null).body()).get(0).get("state").asText().equals("lost"));

        replace_lostWorkerWithANewNode_onlyByAnAdminAndOnlyToAFreeValidName(admin);

        // removing it: admin only; an unknown id is a 404 problem; afterwards the list is empty
        assertThat(call("DELETE", "/api/v1/cluster/workers/1", TestTokens.issue(ctx, Role.OPERATOR), null).statusCode()).isEqualTo(403);
        HttpResponse<String> unknown = call("DELETE", "/api/v1/cluster/workers/99", admin, null);
        assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);
        assertThat(JSON.readTree(unknown.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:unknown-worker");
        HttpResponse<String> removed = call("DELETE", "/api/v1/cluster/workers/1", admin, null);
        assertThat(removed.statusCode()).as(removed.body()).isEqualTo(204);
        assertThat(JSON.readTree(call("GET", "/api/v1/cluster/workers", admin, null).body())).isEmpty();
        assertThat(JSON.readTree(call("GET", "/api/v1/audit", admin, null).body()).get("entries")).anySatisfy(e -> {
            assertThat(e.get("action").asText()).isEqualTo("cluster.worker.remove");
            assertThat(e.get("result").asText()).isEqualTo("ok");
            assertThat(e.get("target").asText()).isEqualTo("worker:1");
        });
    }

    @Test
    void tokens_workerRoleWithVolumes_isRefusedAsAProblem() throws Exception {
        HttpResponse<String> r = call("POST", "/api/v1/tokens", TestTokens.issue(ctx, Role.ADMIN),
                "{\"name\":\"w\",\"role\":\"worker\",\"volumes\":[\"vm-*\"]}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");
        assertThat(JSON.readTree(r.body()).get("detail").asText()).contains("only agent tokens are limited to volumes");
    }

    /**
     * Last (it registers a worker of its own): {@code POST .../takeover-fence/reset}, admin only, confirmed by the worker id and
     * the epoch dropped, refused while a node of the worker is connected, every refusal changing nothing and audited; after the
     * reset the older node registers. The nodes register on the master's own registry (the real one, in its catalog): a real
     * socket's refusal of a stale node is MasterTakeoverFenceTest's.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void resetTakeoverFence_onlyAnAdminsConfirmedResetWhileNoNodeIsConnected_thenTheOlderNodeRegisters() throws Exception {
        WorkerRegistry registry = ctx.getBean(WorkerRegistry.class);
        // node w-old archived its worker's range at epoch 1; a node that took it over archived at epoch 2 and is gone
        WorkerRecord old = registry.register("w-old", FENCE_TOKEN_ID, "127.0.0.2:1", FENCE_CAP, "test", 1);
        registry.archivedAt(old.workerId(), old.epoch(), 1, true);
        registry.disconnected(old.workerId(), old.epoch());
        WorkerRecord newer = registry.register("w-old", FENCE_TOKEN_ID, "127.0.0.3:1", FENCE_CAP, "test", 2);
        registry.archivedAt(newer.workerId(), newer.epoch(), 2, true);
        registry.handedOut(newer.workerId(), newer.range().first() + 40);
        long id = newer.workerId();
        String admin = TestTokens.issue(ctx, Role.ADMIN);
        String path = "/api/v1/cluster/workers/" + id + "/takeover-fence/reset";
        String confirm = "{\"workerId\":" + id + ",\"takeoverEpoch\":2}";

        JsonNode listed = null;
        for (JsonNode w : JSON.readTree(call("GET", "/api/v1/cluster/workers", TestTokens.issue(ctx, Role.VIEWER), null).body())) {
            listed = w.get("id").asLong() == id ? w : listed;
        }
        assertThat(listed.get("takeoverEpoch").asLong()).isEqualTo(2);
        assertThat(listed.get("pbnFloor").asText()).isEqualTo(Long.toString(newer.range().first() + 40));

        assertThat(call("POST", path, TestTokens.issue(ctx, Role.OPERATOR), confirm).statusCode()).isEqualTo(403);
        for (String[] bad : new String[][] {{confirm, "409", "worker-connected", "stop that node"},
                {"{}", "400", "invalid-request", "\"takeoverEpoch\""},
                {"{\"workerId\":" + (id + 1) + ",\"takeoverEpoch\":2}", "400", "invalid-request", "names worker " + (id + 1)},
                {"{\"workerId\":" + id + ",\"takeoverEpoch\":1}", "409", "fence-reset-refused", "is at epoch 2, not 1"}}) {
            if (bad[2].equals("fence-reset-refused")) {
                registry.disconnected(newer.workerId(), newer.epoch()); // the rest of the refusals with no node connected
            }
            HttpResponse<String> r = call("POST", path, admin, bad[0]);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(Integer.parseInt(bad[1]));
            assertThat(JSON.readTree(r.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:" + bad[2]);
            assertThat(JSON.readTree(r.body()).get("detail").asText()).contains(bad[3]);
        }
        assertThat(call("POST", "/api/v1/cluster/workers/99/takeover-fence/reset", admin, "{\"workerId\":99,\"takeoverEpoch\":2}")
                .statusCode()).isEqualTo(404);
        assertThat(registry.fence(id).archiveEpoch()).as("nothing changed by the refusals").isEqualTo(2);
        assertThatThrownBy(() -> registry.register("w-old", FENCE_TOKEN_ID, "127.0.0.2:2", FENCE_CAP, "test", 1))
                .isInstanceOf(RegistrationRefusedException.class).hasMessageContaining("taken over at epoch 2");

        HttpResponse<String> ok = call("POST", path, admin, confirm);
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(JSON.readTree(ok.body()).get("takeoverEpoch").asLong()).isZero();
        assertThat(JSON.readTree(ok.body()).get("pbnFloor").asText()).as("the floor stays").isEqualTo(Long.toString(newer.range().first() + 40));
        assertThat(registry.register("w-old", FENCE_TOKEN_ID, "127.0.0.2:3", FENCE_CAP, "test", 1).workerId()).as("the older node is back")
                .isEqualTo(id);

        List<String> resets = new ArrayList<>();
        JSON.readTree(call("GET", "/api/v1/audit", admin, null).body()).get("entries").forEach(e -> {
            if (e.get("action").asText().equals("cluster.worker.fence-reset")) {
                resets.add(e.get("result").asText() + " " + e.get("target").asText() + " " + e.get("principal").asText());
            }
        });
        assertThat(resets).anyMatch(s -> s.startsWith("ok worker:" + id + " takeover-epoch:2 "))
                .anyMatch(s -> s.startsWith("denied worker:" + id)).anyMatch(s -> s.startsWith("conflict worker:" + id))
                .anyMatch(s -> s.startsWith("failed worker:" + id));
    }

    /** Part of the test above (it needs the registered worker 1): rotating its token over REST, and every refusal changing nothing. */
    private static void rebind_workerToAnotherWorkerToken_onlyAValidWorkerTokenOfAnAdmin(String admin, String workerToken,
                                                                                         WorkerConnector w) throws Exception {
        String oldId = org.holdfast.server.security.ApiTokens.idOf(workerToken).orElseThrow();
        JsonNode next = JSON.readTree(call("POST", "/api/v1/tokens", admin, "{\"name\":\"worker-1b\",\"role\":\"worker\"}").body());
        String nextId = next.get("info").get("id").asText();
        String agentId = JSON.readTree(call("POST", "/api/v1/tokens", admin, "{\"name\":\"a\",\"role\":\"agent\"}").body())
                .get("info").get("id").asText();
        String revokedId = JSON.readTree(call("POST", "/api/v1/tokens", admin, "{\"name\":\"r\",\"role\":\"worker\"}").body())
                .get("info").get("id").asText();
        assertThat(call("DELETE", "/api/v1/tokens/" + revokedId, admin, null).statusCode()).isEqualTo(200);

        String path = "/api/v1/cluster/workers/1/token";
        assertThat(call("PUT", path, TestTokens.issue(ctx, Role.OPERATOR), "{\"tokenId\":\"" + nextId + "\"}").statusCode()).isEqualTo(403);
        for (String[] bad : new String[][] {{"{}", "400", "invalid-request", "tokenId is required"},
                {"{\"tokenId\":\"" + agentId + "\"}", "400", "invalid-request", "has role agent"},
                {"{\"tokenId\":\"" + revokedId + "\"}", "400", "invalid-request", "is revoked"},
                {"{\"tokenId\":\"0000000000000000\"}", "404", "unknown-credential", "0000000000000000"}}) {
            HttpResponse<String> r = call("PUT", path, admin, bad[0]);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(Integer.parseInt(bad[1]));
            assertThat(JSON.readTree(r.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:" + bad[2]);
            assertThat(JSON.readTree(r.body()).get("detail").asText()).contains(bad[3]);
        }
        HttpResponse<String> unknown = call("PUT", "/api/v1/cluster/workers/99/token", admin, "{\"tokenId\":\"" + nextId + "\"}");
        assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);
        assertThat(JSON.readTree(call("GET", "/api/v1/cluster/workers", admin, null).body()).get(0).get("tokenId").asText())
                .as("nothing changed by the refusals").isEqualTo(oldId);

        HttpResponse<String> ok = call("PUT", path, admin, "{\"tokenId\":\"" + nextId + "\"}");
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(JSON.readTree(ok.body()).get("tokenId").asText()).isEqualTo(nextId);
        assertThat(JSON.readTree(ok.body()).get("tokenName").asText()).isEqualTo("worker-1b");
        assertThat(JSON.readTree(ok.body()).get("epoch").asLong()).as("id, range and epoch stay").isEqualTo(1);
        // the audit says which worker was bound to which token (a stolen admin token rebinding a node to a thief's token shows)
        List<String> rebinds = new java.util.ArrayList<>();
        JSON.readTree(call("GET", "/api/v1/audit", admin, null).body()).get("entries").forEach(e -> {
            if (e.get("action").asText().equals("cluster.worker.rebind")) {
                rebinds.add(e.get("result").asText() + " " + e.get("target").asText());
            }
        });
        assertThat(rebinds).contains("ok worker:1 token:" + nextId, "denied worker:1", "failed worker:1", "failed worker:99");
        // its next heartbeat, still on the old token, ends the connection; its REGISTERs are refused until the rebind back
        // (waited for, so that the epoch it comes back at is known: 2)
        await().atMost(Duration.ofSeconds(15)).until(() -> !w.status().connected());
        assertThat(w.status().lastError()).as("the worker says why").contains("bound to another worker token");
        // back to the token in the worker's file
        assertThat(call("PUT", path, admin, "{\"tokenId\":\"" + oldId + "\"}").statusCode()).isEqualTo(200);
    }

    /** Part of the test above (it needs worker 1, lost): handing it to a new node over REST, and every refusal changing nothing. */
    private static void replace_lostWorkerWithANewNode_onlyByAnAdminAndOnlyToAFreeValidName(String admin) throws Exception {
        String path = "/api/v1/cluster/workers/1/replace";
        String agentId = JSON.readTree(call("POST", "/api/v1/tokens", admin, "{\"name\":\"a2\",\"role\":\"agent\"}").body())
                .get("info").get("id").asText();
        assertThat(call("POST", path, TestTokens.issue(ctx, Role.OPERATOR), "{\"node\":\"w-api-2\"}").statusCode()).isEqualTo(403);
        for (String[] bad : new String[][] {{path, "{}", "400", "invalid-request", "node is required"},
                {path, "{\"node\":\"w-api-2\",\"tokenId\":\"" + agentId + "\"}", "400", "invalid-request", "has role agent"},
                {path, "{\"node\":\"w-api-2\",\"tokenId\":\"0000000000000000\"}", "404", "unknown-credential", "0000000000000000"},
                {path, "{\"node\":\"w api\"}", "400", "invalid-request", "holdfast.store.s3.node"},
                {path, "{\"node\":\"w-api\"}", "409", "node-name-taken", "is node w-api already"},
                {"/api/v1/cluster/workers/99/replace", "{\"node\":\"w-api-2\"}", "404", "unknown-worker", "99"}}) {
            HttpResponse<String> r = call("POST", bad[0], admin, bad[1]);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(Integer.parseInt(bad[2]));
            assertThat(JSON.readTree(r.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:" + bad[3]);
            assertThat(JSON.readTree(r.body()).get("detail").asText()).contains(bad[4]);
        }
        assertThat(JSON.readTree(call("GET", "/api/v1/cluster/workers", admin, null).body()).get(0).get("nodeName").asText())
                .as("nothing changed by the refusals").isEqualTo("w-api");

        HttpResponse<String> ok = call("POST", path, admin, "{\"node\":\"w-api-2\"}");
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        JsonNode w = JSON.readTree(ok.body());
        assertThat(w.get("id").asLong()).isEqualTo(1);
        assertThat(w.get("nodeName").asText()).isEqualTo("w-api-2");
        assertThat(w.get("state").asText()).isEqualTo("lost");
        assertThat(w.get("pbnFirst").asText()).as("its range stays").isEqualTo(Long.toString(MembershipSettings.DEFAULT_FIRST_PBN));
        assertThat(w.get("tokenId").isNull()).as("the next worker token to register w-api-2 binds it").isTrue();
        // what the lost host reported is not the new node's: not known until it registers, shown as null (not 0 or "")
        for (String unknown : new String[] {"address", "lastHeartbeat", "loadAverage", "heapUsedBytes", "heapMaxBytes", "diskFreeBytes",
                "cpus", "diskBytes", "version"}) {
            assertThat(w.get(unknown)).as("%s in %s", unknown, w).isNotNull();
            assertThat(w.get(unknown).isNull()).as("%s in %s", unknown, w).isTrue();
        }
        assertThat(JSON.readTree(call("GET", "/api/v1/audit", admin, null).body()).get("entries")).anySatisfy(e -> {
            assertThat(e.get("action").asText()).isEqualTo("cluster.worker.replace");
            assertThat(e.get("result").asText()).isEqualTo("ok");
            assertThat(e.get("target").asText()).isEqualTo("worker:1 node:w-api-2");
        });

        // bound at once to the new host's token: no other worker token can register the new name first
        String hostId = JSON.readTree(call("POST", "/api/v1/tokens", admin, "{\"name\":\"worker-1c\",\"role\":\"worker\"}").body())
                .get("info").get("id").asText();
        HttpResponse<String> bound = call("POST", path, admin, "{\"node\":\"w-api-3\",\"tokenId\":\"" + hostId + "\"}");
        assertThat(bound.statusCode()).as(bound.body()).isEqualTo(200);
        assertThat(JSON.readTree(bound.body()).get("nodeName").asText()).isEqualTo("w-api-3");
        assertThat(JSON.readTree(bound.body()).get("tokenId").asText()).isEqualTo(hostId);
        assertThat(JSON.readTree(bound.body()).get("tokenName").asText()).isEqualTo("worker-1c");
        assertThat(JSON.readTree(call("GET", "/api/v1/audit", admin, null).body()).get("entries")).anySatisfy(e -> {
            assertThat(e.get("action").asText()).isEqualTo("cluster.worker.replace");
            assertThat(e.get("target").asText()).isEqualTo("worker:1 node:w-api-3 token:" + hostId);
        });
    }
}
