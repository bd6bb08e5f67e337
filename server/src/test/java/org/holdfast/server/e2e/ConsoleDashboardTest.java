package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in real Chromium while a real agent process backs up a volume: the running backup's
 * progress shows while it runs, then the volume's snapshot, all without reloading the page. Also
 * measures how long after the login click the dashboard is usable.
 */
class ConsoleDashboardTest {
    private static final LogDir LOGS = new LogDir("ConsoleDashboardTest");
    /** Incompressible and unique, so the backup moves every byte: long enough for several polls on a fast machine. */
    private static final long IMAGE_BYTES = 256L << 20;
    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void startServer() {
        // a history sample every second, so the charts have points within the test
        server = ServerProcess.start(work, "sungem", Map.of("holdfast.stats.sample-interval", "1s"), LOGS);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void dashboard_agentBacksUp_progressThenSnapshotAppearWithoutReload() throws IOException {
        Path image = work.resolve("dash1.img");
        writeRandom(image, IMAGE_BYTES, 13);
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "dashboard")) {
            b.go("login");
            WebElement name = b.awaitVisible(By.name("username"));
            name.sendKeys("admin");
            b.driver().findElement(By.name("password")).sendKeys(ConsoleBrowser.initialAdminPassword(server));
            long clicked = System.nanoTime();
            b.driver().findElement(ConsoleBrowser.test("login-submit")).click();
            // polled every 20 ms (a wait's default is 500 ms): the figure is the time to the figures and lists shown
            By usable = By.cssSelector("[data-test='capacity'] [data-test='used'], [data-test='running-backups']");
            new WebDriverWait(b.driver(), ConsoleBrowser.WAIT, Duration.ofMillis(20)).until(d -> b.all(usable).size() == 2);
            long usableMillis = (System.nanoTime() - clicked) / 1_000_000;
            JavascriptExecutor js = (JavascriptExecutor) b.driver();
            Object login = js.executeScript("const e = performance.getEntriesByType('resource')"
                    + ".filter(r => r.name.endsWith('/api/v1/auth/login')); return e.length ? Math.round(e[0].duration) : -1;");
            System.out.println("console: the dashboard was usable " + usableMillis + " ms after the login click (the login call itself: "
                    + login + " ms)");
            assertThat(usableMillis).as("the first page is usable soon after login").isLessThan(10_000);

            // a mark in the page's window: a reload would lose it
            js.executeScript("window.__holdfastNoReload = 'still here';");

            AgentProcess agents = new AgentProcess(LOGS);
            AgentProcess.Running backup = agents.start(AgentProcess.backupArgs(server, "dash1", image, work.resolve("state")));
            By row = By.cssSelector("[data-test='backup-row'][data-backup='dash1']");
            int seen = 0;
            boolean midway = false;
            String percent = null;
            while (backup.isAlive()) {
                var rows = b.all(row);
                if (!rows.isEmpty()) {
                    try {
                        percent = rows.get(0).findElement(ConsoleBrowser.test("backup-percent")).getText();
                        seen++;
                        // the first sight, replaced by one from the middle of the run if there is one
                        double p = percentOf(percent);
                        boolean middle = p >= 25 && p <= 85;
                        if (seen == 1 || (!midway && middle)) {
                            midway = middle;
                            b.screenshot("backup-running");
                        }
                    } catch (org.openqa.selenium.StaleElementReferenceException e) {
                        // the row was redrawn between finding it and reading it: look again
                    }
                }
                ServerProcess.sleep(100);
            }
            AgentResult r = backup.await();
            assertThat(r.exitCode()).as("backup: %s", r).isZero();
            System.out.println("console: the running backup was seen in " + seen + " checks; last progress " + percent
                    + "; the backup took " + r.elapsed().toMillis() + " ms");
            assertThat(seen).as("the running backup's progress showed while it ran (%s)", r.elapsed()).isPositive();
            assertThat(percent).endsWith("%");

            // the snapshot arrives with the next refresh of the figures
            b.awaitText(By.cssSelector("[data-test='dashboard-volumes'] tr[data-volume='dash1'] [data-test='volume-snapshots']"), "1");
            b.awaitGone(row);
            new WebDriverWait(b.driver(), ConsoleBrowser.WAIT).until(d -> b.all(By.cssSelector("[data-test='charts'] .uplot")).size() == 2);
            // let the charts get a sample or two after the backup
            ServerProcess.sleep(2500);
            assertThat(js.executeScript("return window.__holdfastNoReload;")).isEqualTo("still here");
            assertThat(b.driver().findElement(ConsoleBrowser.test("logical")).getText()).isEqualTo("256.0 MiB");
            // the commit asks for a survey: the stored figure follows within seconds, not at the 5-minute interval
            b.awaitText(ConsoleBrowser.test("stored"), "256.0 MiB");
            assertThat(b.driver().findElement(ConsoleBrowser.test("reclaimable-now")).getText()).as("nothing is dead").isEqualTo("0 B");
            b.screenshot("after-backup");
        }
    }

    /** "42.5 %" as 42.5; -1 for text that is not a percentage ("—" before the size is known). */
    private static double percentOf(String text) {
        return text.matches("\\d+(\\.\\d+)? %") ? Double.parseDouble(text.substring(0, text.length() - 2)) : -1;
    }

    /** {@code bytes} of seeded pseudo-random data (no zero blocks, no duplicates). */
    static void writeRandom(Path file, long bytes, long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        ByteBuffer buf = ByteBuffer.allocate(1 << 20);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long done = 0; done < bytes; done += buf.capacity()) {
                buf.clear();
                while (buf.hasRemaining()) {
                    buf.putLong(random.nextLong());
                }
                buf.flip();
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
        }
    }
}
