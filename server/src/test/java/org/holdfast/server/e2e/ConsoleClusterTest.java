package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.holdfast.server.security.ApiTokens;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.Select;

/**
 * The console's Cluster page on a real master process: an admin replaces a lost worker with a new
 * node name, and a host of that name with a token of its own then takes over the worker's id and
 * range (workers in this JVM, over the master's TLS cluster port).
 */
class ConsoleClusterTest {
    private static final LogDir LOGS = new LogDir("ConsoleClusterTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path work;
    private static ServerProcess master;
    private static int clusterPort;

    @BeforeAll
    static void startMaster() {
        clusterPort = TestPorts.claim();
        master = ServerProcess.start(work.resolve("master"), "sungem", masterOnLoopback(clusterPort), LOGS);
    }

    /** A master's settings on 127.0.0.1 with fast heartbeats: a worker that goes away is lost after 3 s. */
    static Map<String, String> masterOnLoopback(int clusterPort) {
        return Map.of("holdfast.cluster.role", "master", "holdfast.cluster.host", "127.0.0.1",
                "holdfast.cluster.port", Integer.toString(clusterPort), "holdfast.cluster.heartbeat-interval", "200ms",
                "holdfast.cluster.late-after", "1s", "holdfast.cluster.lost-after", "3s");
    }

    @AfterAll
    static void stopMaster() {
        if (master != null) {
            master.close();
        }
    }

    /** A worker token of its own for {@code host}, in a file. */
    private static Path token(String host) throws Exception {
        HttpResponse<String> issued = master.call("POST", "/api/v1/tokens", "{\"name\":\"" + host + "\",\"role\":\"worker\"}");
        assertThat(issued.statusCode()).as(issued.body()).isEqualTo(201);
        return Files.writeString(work.resolve(host + ".token"), JSON.readTree(issued.body()).get("token").asText());
    }

    private static WorkerConnector worker(String node, Path tokenFile) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", clusterPort, null, node, tokenFile,
                MasterTrust.pinned(master.fingerprint()), "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                Duration.ofMillis(500)), new LoadProbe(work));
        w.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> w.status().connected());
        return w;
    }

    private static JsonNode firstWorker() throws Exception {
        return JSON.readTree(master.get("/api/v1/cluster/workers").body()).get(0);
    }

    @Test
    void replaceLostWorker_inTheConsole_thenTheNewNodeTakesItsIdAndRange() throws Exception {
        Path oldToken = token("old-host");
        try (WorkerConnector old = worker("old-host", oldToken)) {
            assertThat(old.status().assignment().workerId()).isEqualTo(1);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> firstWorker().get("state").asText().equals("lost"));
        String range = firstWorker().get("pbnFirst").asText();

        // a second worker, up, bound to a token of its own: the dialog offers that token too, saying whose it is
        try (WorkerConnector other = worker("other-host", token("other-host")); ConsoleBrowser b = ConsoleBrowser.open(master, "cluster")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(master));
            b.go("cluster");
            // a refusal is shown, and changes nothing: no node name
            b.awaitVisible(By.cssSelector("[data-worker='old-host'] [data-test='worker-replace']")).click();
            b.driver().findElement(By.cssSelector("dialog[open] [data-test='confirm-ok']")).click(); // the page has a dialog per action
            b.awaitText(ConsoleBrowser.test("problem"), "node is required");
            assertThat(firstWorker().get("nodeName").asText()).isEqualTo("old-host");

            // bound at once to the new host's own worker token (made before the dialog lists them)
            Path newToken = token("new-host");
            String newTokenId = ApiTokens.idOf(Files.readString(newToken)).orElseThrow();
            b.awaitVisible(By.cssSelector("[data-worker='old-host'] [data-test='worker-replace']")).click();
            b.awaitVisible(ConsoleBrowser.test("replace-node")).sendKeys("new-host");
            Select tokens = new Select(b.driver().findElement(ConsoleBrowser.test("replace-token")));
            await().atMost(Duration.ofSeconds(10)).until(() -> tokens.getOptions().size() == 3); // none, other-host, new-host
            assertThat(tokens.getOptions()).as("not the lost host's own token").noneMatch(o -> o.getText().startsWith("old-host"));
            assertThat(tokens.getOptions()).anySatisfy(o -> assertThat(o.getText()).startsWith("other-host (")
                    .endsWith(", already bound to worker " + other.status().assignment().workerId()));
            assertThat(tokens.getOptions()).anySatisfy(o -> assertThat(o.getText()).isEqualTo("new-host (" + newTokenId + ")"));
            tokens.selectByValue(newTokenId);
            b.screenshot("replace-dialog");
            b.driver().findElement(By.cssSelector("dialog[open] [data-test='confirm-ok']")).click();
            // the file takes the token itself, not its id; the lost host's token is named for revoking
            b.awaitText(ConsoleBrowser.test("notice"), "holdfast.store.s3.node=new-host and the token new-host (id " + newTokenId
                    + "; the hft_... secret shown when it was made) in its token file, revoke the lost host's token old-host (id "
                    + ApiTokens.idOf(Files.readString(oldToken)).orElseThrow() + ") on the Tokens page");
            b.awaitVisible(By.cssSelector("[data-worker='new-host']"));
            assertThat(b.all(By.cssSelector("[data-worker='old-host']"))).isEmpty();
            b.awaitText(By.cssSelector("[data-worker='new-host'] [data-test='worker-token']"), newTokenId);

            try (WorkerConnector replacement = worker("new-host", newToken)) {
                assertThat(replacement.status().assignment().workerId()).isEqualTo(1);
                assertThat(replacement.status().assignment().epoch()).isEqualTo(2);
                assertThat(Long.toString(replacement.status().assignment().range().first())).isEqualTo(range);
                b.awaitText(By.cssSelector("[data-worker='new-host'] [data-test='worker-state']"), "up");
                // this master's engine is not the workers': it never asked them, so the index column says it does not know
                b.awaitText(By.cssSelector("[data-worker='new-host'] [data-test='worker-index']"), "unknown");
                b.screenshot("replaced");
            }
        }
        String boundTo = firstWorker().get("tokenId").asText();
        JsonNode audit = JSON.readTree(master.get("/api/v1/audit").body()).get("entries");
        assertThat(audit).anySatisfy(e -> {
            assertThat(e.get("action").asText()).isEqualTo("cluster.worker.replace");
            assertThat(e.get("target").asText()).isEqualTo("worker:1 node:new-host token:" + boundTo);
        });
    }
}
