package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
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
 * range (workers in this JVM, over the master's TLS cluster port). The page's Range data column shows
 * a worker serving its range data with the blocks and log bytes its heartbeat reports, and "—" for a
 * worker that reports none (a lost one, or one without range data); a worker whose range data
 * was made for another range is marked refused, with a notice that names the remedy. A worker whose
 * range data archives to a bucket (S3Proxy) shows its takeover fence; an admin resets it from the page
 * only once no node of the worker is connected, confirmed by typing the worker id.
 */
class ConsoleClusterTest {
    private static final LogDir LOGS = new LogDir("ConsoleClusterTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String VIEWER_PASSWORD = "viewer-password-1";
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
        return worker(node, tokenFile, null);
    }

    /** Worker {@code node}, serving {@code rangeData} over its range unless that is null (it then reports no range data). */
    private static WorkerConnector worker(String node, Path tokenFile, WorkerRangeData rangeData) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", clusterPort, null, node, tokenFile,
                MasterTrust.pinned(master.fingerprint()), "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                Duration.ofMillis(500)), new LoadProbe(work), null, rangeData);
        w.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> w.status().connected());
        return w;
    }

    /** Range data in {@code work/<node>/range-data}, as a worker process keeps it (small logs). */
    private static WorkerRangeData rangeData(String node) {
        Path dir = work.resolve(node).resolve(WorkerRangeData.DIRECTORY);
        return new WorkerRangeData(dir, new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 64, 0));
    }

    /** Stores one random block in {@code rangeData}'s open store and syncs it: what a master's data call would leave. */
    private static void storeOneBlock(WorkerRangeData rangeData) {
        await().atMost(Duration.ofSeconds(20)).until(() -> rangeData.store() != null); // it opens at the registration
        byte[] block = new byte[4096];
        new Random(19).nextBytes(block);
        byte[] fp = new byte[32];
        BlockHasher.forCurrentThread().sha256(block, 0, block.length, fp, 0);
        DataStore store = rangeData.store();
        store.append(fp, 0, block, 0, block.length, FormatVersions.CODEC_RAW, block.length);
        store.sync();
    }

    /** {@code n} bytes as the console writes them (format.js {@code bytes}), for sizes of a KiB up to a MiB. */
    private static String kib(long n) {
        assertThat(n).isBetween(1024L, (1L << 20) - 1);
        double v = n / 1024.0;
        return String.format(Locale.ROOT, v < 10 ? "%.2f KiB" : "%.1f KiB", v);
    }

    private static By rangeDataCell(String node) {
        return By.cssSelector("[data-worker='" + node + "'] [data-test='worker-range-data']");
    }

    private static JsonNode listed(String node) throws Exception {
        for (JsonNode w : JSON.readTree(master.get("/api/v1/cluster/workers").body())) {
            if (w.get("nodeName").asText().equals(node)) {
                return w;
            }
        }
        throw new AssertionError("worker " + node + " is not listed");
    }

    /**
     * A worker whose {@code range-data} was created for another range (as if copied from another node):
     * the page marks it refused and a notice names the remedy and the operations guide's section.
     */
    private static void refusedRangeData_isAWarningWithItsRemedy(ConsoleBrowser b) throws Exception {
        try (WorkerRangeData foreign = rangeData("copied-host")) {
            foreign.claim(new PbnRange(1L << 60, (1L << 60) + (1L << 20))).sync();
        }
        try (WorkerRangeData copied = rangeData("copied-host"); WorkerConnector w = worker("copied-host", token("copied-host"), copied)) {
            b.awaitText(rangeDataCell("copied-host"), "refused");
            assertThat(b.driver().findElement(By.cssSelector("[data-worker='copied-host'] [data-test='worker-range-data'] .badge.warn"))
                    .getText()).isEqualTo("refused");
            long id = w.status().assignment().workerId();
            b.awaitText(ConsoleBrowser.test("range-data-refused-hint"), "Worker " + id + " (copied-host) refuses its range data");
            assertThat(b.driver().findElement(ConsoleBrowser.test("range-data-refused-hint")).getText())
                    .contains("move the directory away").contains("“A worker's range data”");
            b.screenshot("range-data-refused");
        }
    }

    /**
     * A worker whose range data archives to a bucket raises its takeover fence with its first serving
     * heartbeat: the page shows the epoch, and offers no reset while the node is connected (the reason
     * shown). Once it is lost the reset asks for the worker id; a node that connects while the dialog
     * is open makes the server refuse it (409 on the page, the fence unchanged); after the node is
     * gone again the reset drops the fence, audited.
     */
    private static void takeoverFence_resetByAnAdminOnlyWhileNoNodeIsConnected(ConsoleBrowser b) throws Exception {
        By epochCell = By.cssSelector("[data-worker='fenced-host'] [data-test='worker-takeover-epoch']");
        By reset = By.cssSelector("[data-worker='fenced-host'] [data-test='worker-fence-reset']");
        Path token = token("fenced-host");
        Path dir = work.resolve("fenced-host").resolve(WorkerRangeData.DIRECTORY);
        try (S3ProxyFixture s3 = S3ProxyFixture.start(work.resolve("s3"));
             WorkerRangeData archived = new WorkerRangeData(dir, new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT,
                     64, 0), new WorkerRangeData.Archive(() -> S3ObjectStore.open(s3.settings("fence/")), LogCache.Settings.defaults(),
                     Duration.ofSeconds(10)))) {
            long id;
            long epoch;
            try (WorkerConnector w = worker("fenced-host", token, archived)) {
                id = w.status().assignment().workerId();
                await().atMost(Duration.ofSeconds(20)).until(() -> listed("fenced-host").get("takeoverEpoch").asLong() > 0);
                epoch = listed("fenced-host").get("takeoverEpoch").asLong();
                b.awaitText(epochCell, Long.toString(epoch));
                assertThat(b.driver().findElement(By.cssSelector("[data-worker='fenced-host'] [data-test='worker-pbn-floor']")).getText())
                        .as("no PBN heard handed out").isEqualTo("—");
                // other-host stored a block: its floor is past it
                String floor = listed("other-host").get("pbnFloor").asText();
                assertThat(Long.parseLong(floor)).isGreaterThan(listed("other-host").get("pbnFirst").asLong());
                b.awaitText(By.cssSelector("[data-worker='other-host'] [data-test='worker-pbn-floor']"), floor);
                assertThat(b.driver().findElement(reset).isEnabled()).as("connected: no reset").isFalse();
                assertThat(b.driver().findElement(reset).getAttribute("title")).contains("a node of this worker is connected");
                assertThat(b.driver().findElement(By.cssSelector("[data-worker='fenced-host'] [data-test='worker-fence-reset-why']"))
                        .getText()).isEqualTo("stop its nodes first");
                b.screenshot("fence-connected");
            }
            b.awaitText(By.cssSelector("[data-worker='fenced-host'] [data-test='worker-state']"), "lost");
            viewerSeesTheFenceButNoReset(b, epochCell, epoch);
            b.awaitVisible(reset).click();
            b.awaitText(By.cssSelector("dialog[open] [data-test='fence-reset-what']"), "took its range over at takeover epoch " + epoch);
            assertThat(b.driver().findElement(By.cssSelector("dialog[open]")).getText()).contains("only if the node that took the range over is destroyed");
            By ok = By.cssSelector("dialog[open] [data-test='confirm-ok']");
            By typed = By.cssSelector("dialog[open] [data-test='fence-reset-id']");
            assertThat(b.driver().findElement(ok).isEnabled()).as("nothing typed").isFalse();
            b.driver().findElement(typed).sendKeys(Long.toString(id + 1));
            assertThat(b.driver().findElement(ok).isEnabled()).as("another worker's id").isFalse();
            b.driver().findElement(typed).clear();
            b.driver().findElement(typed).sendKeys(Long.toString(id));
            b.screenshot("fence-reset-dialog");

            // the node comes back while the dialog is open: the server refuses, the page says why, nothing changes
            try (WorkerConnector back = worker("fenced-host", token, archived)) {
                b.driver().findElement(ok).click();
                b.awaitText(ConsoleBrowser.test("problem"), "stop that node");
                assertThat(b.driver().findElement(ConsoleBrowser.test("problem")).getText()).contains("Worker connected (HTTP 409)");
                assertThat(listed("fenced-host").get("takeoverEpoch").asLong()).isEqualTo(epoch);
            }
            // lost the moment its connection ends: then the server takes the reset (the page may not have seen it up meanwhile)
            await().atMost(Duration.ofSeconds(10)).until(() -> listed("fenced-host").get("state").asText().equals("lost"));
            b.awaitText(By.cssSelector("[data-worker='fenced-host'] [data-test='worker-state']"), "lost");
            b.awaitVisible(reset).click();
            b.awaitVisible(typed).sendKeys(Long.toString(id));
            b.driver().findElement(ok).click();
            b.awaitText(ConsoleBrowser.test("notice"), "Worker " + id + "'s takeover fence at epoch " + epoch + " is reset");
            b.awaitText(epochCell, "none");
            assertThat(b.all(reset)).as("no fence, no reset").isEmpty();
            assertThat(listed("fenced-host").get("takeoverEpoch").asLong()).isZero();
            b.screenshot("fence-reset");
            JsonNode audit = JSON.readTree(master.get("/api/v1/audit").body()).get("entries");
            assertThat(audit).anySatisfy(e -> {
                assertThat(e.get("action").asText()).isEqualTo("cluster.worker.fence-reset");
                assertThat(e.get("result").asText()).isEqualTo("ok");
                assertThat(e.get("target").asText()).isEqualTo("worker:" + id + " takeover-epoch:" + epoch);
            });
        }
    }

    /** {@code b} logged in again as a viewer: the fenced, lost worker's epoch is shown, and no reset (the title says who can); then as the admin again. */
    private static void viewerSeesTheFenceButNoReset(ConsoleBrowser b, By epochCell, long epoch) {
        HttpResponse<String> user = master.call("POST", "/api/v1/users", "{\"name\":\"fence-viewer\",\"role\":\"viewer\",\"password\":\""
                + VIEWER_PASSWORD + "\"}");
        assertThat(user.statusCode()).as(user.body()).isEqualTo(201);
        b.driver().findElement(ConsoleBrowser.test("logout")).click();
        b.awaitVisible(ConsoleBrowser.test("login-form"));
        b.login("fence-viewer", VIEWER_PASSWORD);
        b.go("cluster");
        b.awaitText(epochCell, Long.toString(epoch));
        assertThat(b.driver().findElement(epochCell).getAttribute("title")).contains("an admin can reset the fence on this page");
        assertThat(b.all(ConsoleBrowser.test("worker-fence-reset"))).isEmpty();
        b.driver().findElement(ConsoleBrowser.test("logout")).click();
        b.awaitVisible(ConsoleBrowser.test("login-form"));
        b.login("admin", ConsoleBrowser.initialAdminPassword(master));
        b.go("cluster");
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
        // it serves range data, with one block stored in its range
        try (WorkerRangeData otherData = rangeData("other-host"); WorkerConnector other = worker("other-host", token("other-host"), otherData);
             ConsoleBrowser b = ConsoleBrowser.open(master, "cluster")) {
            storeOneBlock(otherData);
            b.login("admin", ConsoleBrowser.initialAdminPassword(master));
            b.go("cluster");
            // the Range data column: serving with its blocks used and log size; "—" for the lost worker, whose link is down
            await().atMost(Duration.ofSeconds(10)).until(() -> listed("other-host").get("rangeData").path("pbnsUsed").asLong() == 1);
            long logBytes = listed("other-host").get("rangeData").get("logBytes").asLong();
            assertThat(logBytes).as("the data log holds the block").isGreaterThanOrEqualTo(4096);
            By figures = By.cssSelector("[data-worker='other-host'] [data-test='worker-range-data-figures']");
            b.awaitText(figures, "1 block, " + kib(logBytes));
            assertThat(b.driver().findElement(figures).getText()).isEqualTo("1 block, " + kib(logBytes));
            assertThat(b.driver().findElement(rangeDataCell("other-host")).getText()).isEqualTo("serving 1 block, " + kib(logBytes));
            assertThat(b.driver().findElement(rangeDataCell("other-host")).getAttribute("data-state")).isEqualTo("serving");
            assertThat(b.driver().findElement(rangeDataCell("old-host")).getText()).isEqualTo("—");
            assertThat(b.all(ConsoleBrowser.test("range-data-refused-hint"))).as("no worker refuses its range data").isEmpty();
            b.screenshot("range-data");
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
                // up, but it serves no range data (as a worker of an older release): nothing reported
                assertThat(b.driver().findElement(rangeDataCell("new-host")).getText()).isEqualTo("—");
                assertThat(listed("new-host").get("rangeData").isNull()).isTrue();
                b.screenshot("replaced");
            }
            refusedRangeData_isAWarningWithItsRemedy(b);
            takeoverFence_resetByAnAdminOnlyWhileNoNodeIsConnected(b);
        }
        String boundTo = firstWorker().get("tokenId").asText();
        JsonNode audit = JSON.readTree(master.get("/api/v1/audit").body()).get("entries");
        assertThat(audit).anySatisfy(e -> {
            assertThat(e.get("action").asText()).isEqualTo("cluster.worker.replace");
            assertThat(e.get("target").asText()).isEqualTo("worker:1 node:new-host token:" + boundTo);
        });
    }
}
