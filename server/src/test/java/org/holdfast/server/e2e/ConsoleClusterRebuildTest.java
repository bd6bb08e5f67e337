package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The console's Rebuild index action on a real master process ({@code holdfast.dedup.engine=cluster},
 * {@code hash} mode) with two workers in this JVM that serve dedup over the master's TLS cluster
 * port, after an agent backed up through them: refused while a worker is lost (the problem detail on
 * the page, no job started); after that worker is replaced over REST and its new node is up, the page
 * points to the rebuild, and the job it starts succeeds with its counts on the page. When that node
 * later starts its index over, the page marks it and offers the rebuild until one succeeds. An
 * operator sees no rebuild action.
 */
class ConsoleClusterRebuildTest {
    private static final LogDir LOGS = new LogDir("ConsoleClusterRebuildTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int IMAGE = 2 << 20;
    private static final String OPERATOR_PASSWORD = "operator-password-1";
    @TempDir
    static Path work;
    private static ServerProcess master;
    private static int clusterPort;

    @BeforeAll
    static void startMaster() {
        clusterPort = TestPorts.claim();
        Map<String, String> p = new HashMap<>(ConsoleClusterTest.masterOnLoopback(clusterPort));
        p.putAll(Map.of("holdfast.dedup.cluster.mode", "hash", "holdfast.dedup.sungem.sfi-size", "8MB",
                "holdfast.dedup.sungem.container-cache-size", "32MB"));
        master = ServerProcess.start(work.resolve("master"), "cluster", p, LOGS);
    }

    @AfterAll
    static void stopMaster() {
        if (master != null) {
            master.close();
        }
    }

    /** A worker node in this JVM with a dedup engine of its own in {@code work/<node>}, connected with a worker token of its own. */
    private record Worker(WorkerConnector link, LazyDedupWorker engine) implements AutoCloseable {
        static Worker start(String node) throws Exception {
            Path token = work.resolve(node + ".token");
            if (!Files.exists(token)) { // a node that comes back keeps the token it is bound to
                HttpResponse<String> issued = master.call("POST", "/api/v1/tokens", "{\"name\":\"" + node + "\",\"role\":\"worker\"}");
                assertThat(issued.statusCode()).as(issued.body()).isEqualTo(201);
                Files.writeString(token, JSON.readTree(issued.body()).get("token").asText());
            }
            Path dir = work.resolve(node);
            LazyDedupWorker engine = new LazyDedupWorker(0, dir,
                    () -> new LocalDedupWorker(0, dir, SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC()));
            WorkerConnector link = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", clusterPort, null, node, token,
                    MasterTrust.pinned(master.fingerprint()), "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                    Duration.ofMillis(500)), new LoadProbe(work), engine);
            link.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> link.status().connected());
            return new Worker(link, engine);
        }

        @Override
        public void close() {
            link.close();
            engine.close();
        }
    }

    private static By row(String node, String test) {
        return By.cssSelector("[data-worker='" + node + "'] [data-test='" + test + "']");
    }

    private static long figure(ConsoleBrowser b, String key) {
        String text = b.driver().findElement(By.cssSelector("[data-test='rebuild-result'] [data-key='" + key + "']")).getText();
        return Long.parseLong(text.replaceAll("[^0-9]", ""));
    }

    @Test
    void rebuildInTheConsole_refusedWhileAWorkerIsLost_thenAfterTheReplacementSucceedsWithItsCounts() throws Exception {
        try (Worker lost = Worker.start("w-a"); Worker other = Worker.start("w-b")) {
            assertThat(lost.link().status().assignment().workerId()).isEqualTo(1);
            assertThat(other.link().status().assignment().workerId()).isEqualTo(2);
            Path image = VolumeImage.generate(7, IMAGE).fill(0, IMAGE, Content.RANDOM).writeTo(work.resolve("vol.img"));
            BackupSummary backup = new AgentProcess(LOGS).backup(master, "vol", image, work.resolve("agent-state"));
            assertThat(backup.newBlocks()).as("%s", backup).isEqualTo(IMAGE / 4096);

            try (ConsoleBrowser b = ConsoleBrowser.open(master, "cluster-rebuild")) {
                b.login("admin", ConsoleBrowser.initialAdminPassword(master));
                b.go("cluster");
                b.awaitVisible(row("w-a", "worker-rebuild"));
                lost.link().close(); // its host is gone; the connector closes again at the end, which does nothing
                b.awaitText(row("w-a", "worker-state"), "lost");
                assertThat(b.all(row("w-a", "worker-rebuild"))).as("only an up worker offers the rebuild").isEmpty();

                b.driver().findElement(row("w-b", "worker-rebuild")).click();
                b.awaitText(By.cssSelector("dialog[open]"), "reads the fingerprint of every block");
                b.driver().findElement(By.cssSelector("dialog[open] [data-test='confirm-ok']")).click();
                b.awaitText(ConsoleBrowser.test("problem"), "worker 1 (w-a) is not connected: what only it holds would be taught");
                assertThat(b.driver().findElement(ConsoleBrowser.test("problem")).getText()).contains("Rebuild refused (HTTP 409)");
                b.screenshot("refused");
                assertThat(JSON.readTree(master.get("/api/v1/jobs?kind=worker-index-rebuild").body()).get("jobs")).isEmpty();

                HttpResponse<String> replaced = master.call("POST", "/api/v1/cluster/workers/1/replace", "{\"node\":\"w-c\"}");
                assertThat(replaced.statusCode()).as(replaced.body()).isEqualTo(200);
                b.awaitVisible(By.cssSelector("[data-worker='w-c']"));
                assertThat(b.all(ConsoleBrowser.test("rebuild-hint"))).as("no hint before the new node is up").isEmpty();
                try (Worker replacement = Worker.start("w-c")) {
                    assertThat(replacement.link().status().assignment().workerId()).isEqualTo(1);
                    b.awaitText(ConsoleBrowser.test("rebuild-hint"), "Worker 1 is up on its new node w-c");
                    b.screenshot("hint");
                    b.driver().findElement(ConsoleBrowser.test("rebuild-hint-start")).click();
                    b.awaitVisible(By.cssSelector("dialog[open] [data-test='confirm-ok']")).click();
                    b.awaitText(ConsoleBrowser.test("rebuild-state"), "succeeded");
                    b.screenshot("rebuilt");

                    WebElement link = b.driver().findElement(ConsoleBrowser.test("rebuild-job"));
                    long id = Long.parseLong(link.getText().replaceAll("[^0-9]", ""));
                    assertThat(link.getAttribute("href")).endsWith("#/jobs/" + id);
                    JsonNode result = JSON.readTree(master.get("/api/v1/jobs/" + id).body()).get("result");
                    assertThat(result.get("workerId").asLong()).isEqualTo(1);
                    long read = figure(b, "blocksRead");
                    long taught = figure(b, "taught");
                    long others = figure(b, "heldByOthers");
                    assertThat(read).as("every stored block is read").isEqualTo(backup.newBlocks()).isEqualTo(result.get("blocksRead").asLong());
                    assertThat(taught).as("hash mode: about half hash to worker 1").isPositive().isEqualTo(result.get("taught").asLong());
                    assertThat(others).isPositive().isEqualTo(result.get("heldByOthers").asLong());
                    assertThat(taught + others + figure(b, "alreadyHeld")).isEqualTo(read);
                    assertThat(b.driver().findElement(ConsoleBrowser.test("rebuild")).getText()).contains("of worker 1 (w-c)");
                    assertThat(b.all(ConsoleBrowser.test("rebuild-hint"))).as("the hint ends with the rebuild").isEmpty();
                }
                startedOverHintLeadsToARebuild(b);
                operatorSeesNoRebuild(b);
            }
        }
    }

    /**
     * Worker 1's node comes back with an owner file of an older epoch (as if a REGISTERED had been cut
     * off before it recorded it): it starts its index over and tells the master, the page marks the
     * worker and offers the rebuild, and a succeeded rebuild ends the mark.
     */
    private static void startedOverHintLeadsToARebuild(ConsoleBrowser b) throws Exception {
        Files.writeString(work.resolve("w-c").resolve("worker-id"), "1 1\n");
        try (Worker back = Worker.start("w-c")) {
            assertThat(back.link().status().assignment().epoch()).isEqualTo(3);
            b.awaitText(ConsoleBrowser.test("started-over-hint"), "Worker 1 (w-c) started its dedup index over");
            assertThat(b.driver().findElement(ConsoleBrowser.test("started-over-hint")).getText()).contains("missed a registration");
            b.awaitVisible(row("w-c", "worker-index-started-over"));
            b.screenshot("started-over");
            String earlier = b.driver().findElement(ConsoleBrowser.test("rebuild-job")).getText();
            b.driver().findElement(ConsoleBrowser.test("started-over-start")).click();
            b.awaitVisible(By.cssSelector("dialog[open] [data-test='confirm-ok']")).click();
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> // a new job, not the earlier one's card
                    !b.driver().findElement(ConsoleBrowser.test("rebuild-job")).getText().equals(earlier)
                    && b.driver().findElement(ConsoleBrowser.test("rebuild-state")).getText().equals("succeeded"));
            await().atMost(Duration.ofSeconds(10)).until(() -> b.all(ConsoleBrowser.test("started-over-hint")).isEmpty()
                    && b.all(row("w-c", "worker-index-started-over")).isEmpty());
            JsonNode w1 = JSON.readTree(master.get("/api/v1/cluster/workers").body()).get(0);
            assertThat(w1.get("indexStartedOver").isNull()).as(w1.toString()).isTrue();
        }
    }

    /** Logs {@code b} out and in again as an operator: worker w-b is up, and neither its action nor the rebuild is shown. */
    private static void operatorSeesNoRebuild(ConsoleBrowser b) {
        HttpResponse<String> user = master.call("POST", "/api/v1/users",
                "{\"name\":\"op\",\"role\":\"operator\",\"password\":\"" + OPERATOR_PASSWORD + "\"}");
        assertThat(user.statusCode()).as(user.body()).isEqualTo(201);
        b.driver().findElement(ConsoleBrowser.test("logout")).click();
        b.awaitVisible(ConsoleBrowser.test("login-form"));
        b.login("op", OPERATOR_PASSWORD);
        b.go("cluster");
        b.awaitText(By.cssSelector("[data-worker='w-b'] [data-test='worker-state']"), "up");
        assertThat(b.all(ConsoleBrowser.test("worker-rebuild"))).isEmpty();
        assertThat(b.all(ConsoleBrowser.test("rebuild"))).isEmpty();
    }
}
