package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The jobs pages in real Chromium against a real server with volumes a real agent backed up: a GC
 * run started from the console and watched to its end, a verify of one snapshot and its result, a
 * verify of everything cancelled while it runs, and a viewer who sees no controls.
 */
@ExtendWith(SharedConsoleServer.class)
class ConsoleJobsTest {
    private static final LogDir LOGS = new LogDir("ConsoleJobsTest");
    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void backUp(ServerProcess shared) throws IOException {
        // verify reads at 4 MB/s (SharedConsoleServer.SETTINGS): a pass over the big volume takes seconds,
        // long enough to cancel from the page
        server = shared;
        AgentProcess agents = new AgentProcess(LOGS);
        Path small = work.resolve("small.img");
        ConsoleDashboardTest.writeRandom(small, 1L << 20, 21);
        agents.backup(server, "jobs-small", small, work.resolve("state-small"));
        Path big = work.resolve("big.img");
        ConsoleDashboardTest.writeRandom(big, 32L << 20, 22);
        agents.backup(server, "jobs-big", big, work.resolve("state-big"));
    }

    @Test
    void jobs_gcRunAndVerify_startedFromTheConsoleAndWatchedToTheirEnd() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "jobs")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(server));
            b.go("jobs");

            // a GC run: started by the button, followed on its page until it succeeds
            b.awaitVisible(ConsoleBrowser.test("start-gc")).click();
            long gcId = startedJob(b);
            b.driver().findElement(By.cssSelector("[data-test='job-started'] a")).click();
            b.awaitText(ConsoleBrowser.test("job-state"), "succeeded");
            assertThat(b.driver().getCurrentUrl()).endsWith("#/jobs/" + gcId);
            assertThat(b.driver().findElement(ConsoleBrowser.test("job-log")).getText()).contains("retention");
            b.awaitVisible(ConsoleBrowser.test("job-result"));
            b.screenshot("gc-job");

            // a verify of one snapshot: its result shows the blocks it read
            b.go("jobs");
            b.awaitVisible(By.cssSelector("input[name='verify-scope'][value='snapshot']")).click();
            new Select(b.awaitVisible(ConsoleBrowser.test("verify-volume"))).selectByValue("jobs-small");
            b.driver().findElement(ConsoleBrowser.test("verify-snapshot")).sendKeys("1");
            b.driver().findElement(ConsoleBrowser.test("start-verify")).click();
            long verifyId = startedJob(b);
            assertThat(verifyId).isGreaterThan(gcId);
            b.go("jobs/" + verifyId);
            b.awaitText(ConsoleBrowser.test("job-state"), "succeeded");
            b.awaitVisible(ConsoleBrowser.test("job-result"));
            assertThat(resultRow(b, "scope")).isEqualTo("snapshot jobs-small@1");
            assertThat(resultRow(b, "blocksRead")).isEqualTo("256"); // 1 MiB of 4 KiB blocks
            assertThat(resultRow(b, "badBlocks")).isEqualTo("0");
            b.screenshot("verify-job");
        }
    }

    @Test
    void jobs_verifyOfEverything_cancelledFromTheList() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "jobs-cancel")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(server));
            b.go("jobs");
            b.awaitVisible(By.cssSelector("input[name='verify-scope'][value='all']")).click();
            b.driver().findElement(ConsoleBrowser.test("start-verify")).click();
            long id = startedJob(b);
            By cancel = By.cssSelector("[data-test='active-jobs'] tr[data-job='" + id + "'] [data-test='cancel-job']");
            b.awaitVisible(cancel);
            b.screenshot("running");
            b.driver().findElement(cancel).click();
            By state = By.cssSelector("[data-test='job-history'] tr[data-job='" + id + "'] [data-test='job-state']");
            b.awaitText(state, "cancelled");
            b.screenshot("cancelled");
            b.go("jobs/" + id);
            b.awaitText(ConsoleBrowser.test("job-state"), "cancelled");
            assertThat(b.awaitVisible(ConsoleBrowser.test("job-error")).getText()).startsWith("Cancelled:");
        }
    }

    @Test
    void jobs_viewer_seesJobsButNoControls() {
        HttpResponse<String> created = server.call("POST", "/api/v1/users",
                "{\"name\":\"jo\",\"role\":\"viewer\",\"password\":\"viewer-password-1\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        server.runJob("/api/v1/gc/runs", java.time.Duration.ofSeconds(60));
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "jobs-viewer")) {
            b.login("jo", "viewer-password-1");
            b.go("jobs");
            b.awaitVisible(ConsoleBrowser.test("viewer-note"));
            new WebDriverWait(b.driver(), ConsoleBrowser.WAIT).until(d -> !b.all(By.cssSelector("[data-test='job-history'] tr[data-job]")).isEmpty());
            assertThat(b.all(ConsoleBrowser.test("job-controls"))).isEmpty();
            assertThat(b.all(ConsoleBrowser.test("cancel-job"))).isEmpty();
            b.screenshot("viewer");
        }
    }

    /** The value cell of the job result's row {@code key}. */
    private static String resultRow(ConsoleBrowser b, String key) {
        return b.driver().findElement(By.cssSelector("[data-test='job-result'] tr[data-key='" + key + "'] td")).getText();
    }

    /** The id of the job the page just reported as started. */
    private static long startedJob(ConsoleBrowser b) {
        WebElement notice = b.awaitVisible(ConsoleBrowser.test("job-started"));
        String href = notice.findElement(By.tagName("a")).getAttribute("href");
        return Long.parseLong(href.substring(href.lastIndexOf('/') + 1));
    }
}
