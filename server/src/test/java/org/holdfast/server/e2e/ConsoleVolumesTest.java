package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chromium.ChromiumDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The volume pages in real Chromium against a real server and real agent processes: a backed-up
 * volume and one made over the API in the table (filter, sort), a volume's page with its snapshot
 * timeline and last agent, the snapshot image downloaded by the browser through the console, byte
 * for byte the source, and a viewer who sees the pages without a control that changes or downloads.
 */
class ConsoleVolumesTest {
    private static final LogDir LOGS = new LogDir("ConsoleVolumesTest");
    @TempDir
    static Path work;
    private static ServerProcess server;
    private static VolumeImage web;

    @BeforeAll
    static void backUp() {
        server = ServerProcess.start(work, "sungem", LOGS);
        AgentProcess agent = new AgentProcess(LOGS);
        web = VolumeImage.generate(13, 3 << 20);
        agent.backup(server, "vm-web", web.writeTo(work.resolve("web-1.img")), work.resolve("state-web"));
        web.scribble(8);
        agent.backup(server, "vm-web", web.writeTo(work.resolve("web-2.img")), work.resolve("state-web"));
        // a second volume made over the API, with a policy and quota of its own and no backup yet (an agent run costs ~10 s)
        var created = server.call("POST", "/api/v1/volumes",
                "{\"name\": \"db-main\", \"policy\": \"keep-last=3,daily=7\", \"quotaBytes\": 1073741824}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private static ConsoleBrowser admin(String label) {
        return ConsoleBrowser.open(server, label).login("admin", ConsoleBrowser.initialAdminPassword(server));
    }

    private static List<String> volumeRows(ConsoleBrowser b) {
        return b.all(By.cssSelector("[data-test='volumes'] tbody tr[data-volume]")).stream()
                .map(r -> r.getAttribute("data-volume")).toList();
    }

    @Test
    void volumes_backedUpVolumesListed_filterAndSortWork() {
        try (ConsoleBrowser b = admin("volumes")) {
            b.go("volumes");
            b.awaitVisible(By.cssSelector("tr[data-volume='vm-web']"));
            b.awaitVisible(By.cssSelector("tr[data-volume='db-main']"));
            WebElement row = b.driver().findElement(By.cssSelector("tr[data-volume='vm-web']"));
            b.awaitText(By.cssSelector("tr[data-volume='vm-web']"), "3.00 MiB"); // size
            assertThat(row.getText()).contains("#2").contains("30d").contains("e2e-agent");
            String db = b.driver().findElement(By.cssSelector("tr[data-volume='db-main']")).getText();
            assertThat(db).contains("keep-last=3,daily=7").contains("1.00 GiB").contains("no backup yet");
            assertThat(volumeRows(b)).containsExactly("db-main", "vm-web"); // by name
            b.screenshot("table");

            b.driver().findElement(By.cssSelector("button[data-sort='size']")).click(); // ascending
            b.driver().findElement(By.cssSelector("button[data-sort='size']")).click(); // descending: the largest first
            assertThat(volumeRows(b)).containsExactly("vm-web", "db-main");

            b.driver().findElement(ConsoleBrowser.test("volume-filter")).sendKeys("db");
            b.awaitText(ConsoleBrowser.test("volume-count"), "1 of 2");
            assertThat(volumeRows(b)).containsExactly("db-main");
        }
    }

    @Test
    void volume_page_showsTheTimelineAndTheAgent() {
        try (ConsoleBrowser b = admin("volume")) {
            b.go("volumes/vm-web");
            b.awaitVisible(ConsoleBrowser.test("timeline"));
            List<WebElement> marks = b.all(By.cssSelector("[data-test='timeline'] li[data-snapshot]"));
            assertThat(marks).extracting(m -> m.getAttribute("data-snapshot")).containsExactly("1", "2");
            assertThat(b.driver().findElement(ConsoleBrowser.test("snapshot-count")).getText()).isEqualTo("2");
            b.awaitText(ConsoleBrowser.test("last-agent"), "e2e-agent");
            b.screenshot("page");
            marks.get(0).findElement(By.tagName("a")).click();
            b.awaitText(ConsoleBrowser.test("snapshot-id"), "vm-web@1");
        }
    }

    @Test
    void snapshot_download_browserSavesTheSourceBytes() throws Exception {
        Path downloads = Files.createDirectories(work.resolve("downloads"));
        try (ConsoleBrowser b = admin("snapshot")) {
            // where the browser saves downloads (Chromium's own setting, through the DevTools protocol)
            ((ChromiumDriver) b.driver()).executeCdpCommand("Browser.setDownloadBehavior",
                    Map.<String, Object>of("behavior", "allow", "downloadPath", downloads.toString()));
            b.go("volumes/vm-web/snapshots/2");
            b.awaitText(ConsoleBrowser.test("kept-until"), "keeps it");
            b.driver().findElement(ConsoleBrowser.test("download")).click();
            String href = b.awaitVisible(ConsoleBrowser.test("download-link")).getAttribute("href");
            assertThat(href).contains("/api/v1/volumes/vm-web/snapshots/2/image/download?link=");
            b.screenshot("page");
            Path file = downloads.resolve("vm-web-2.img");
            new WebDriverWait(b.driver(), ConsoleBrowser.WAIT).until(d -> Files.exists(file) && !hasPartial(downloads)
                    && size(file) == web.length());
            assertThat(sha256(Files.readAllBytes(file))).isEqualTo(web.sha256());
        }
    }

    @Test
    void viewer_seesTheVolumeAndSnapshot_butNoControlThatChangesOrDownloads() {
        var made = server.call("POST", "/api/v1/users", "{\"name\": \"vera\", \"role\": \"viewer\", \"password\": \"viewer-pass-123\"}");
        assertThat(made.statusCode()).as(made.body()).isEqualTo(201);
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "viewer").login("vera", "viewer-pass-123")) {
            b.go("volumes/vm-web");
            b.awaitVisible(ConsoleBrowser.test("timeline"));
            b.awaitVisible(ConsoleBrowser.test("quota"));
            for (String control : List.of("delete-volume", "assign-policy", "quota-set", "policy-text")) {
                assertThat(b.all(ConsoleBrowser.test(control))).as(control).isEmpty();
            }
            b.go("volumes/vm-web/snapshots/1");
            b.awaitText(ConsoleBrowser.test("snapshot-id"), "vm-web@1");
            b.awaitText(ConsoleBrowser.test("kept-until"), "keeps it");
            for (String control : List.of("hold", "release", "delete-snapshot", "download")) {
                assertThat(b.all(ConsoleBrowser.test(control))).as(control).isEmpty();
            }
            assertThat(b.driver().findElement(ConsoleBrowser.test("viewer-note")).getText()).contains("need an operator");
            b.screenshot("snapshot");
        }
    }

    private static boolean hasPartial(Path dir) {
        try (var s = Files.list(dir)) {
            return s.anyMatch(p -> p.getFileName().toString().endsWith(".crdownload"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return -1;
        }
    }

    private static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }
}
