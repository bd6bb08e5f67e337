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
 * The volume pages in real Chromium against a real server and real agent processes: backed-up
 * volumes in the table (filter, sort), a volume's page with its snapshot timeline and last agent,
 * and the snapshot image downloaded by the browser through the console, byte for byte the source.
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
        agent.backup(server, "db-main", VolumeImage.generate(14, 1 << 20).writeTo(work.resolve("db.img")), work.resolve("state-db"));
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
