package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.holdfast.common.ports.TestPorts;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Real headless Chromium (Debian's {@code chromium} and {@code chromium-driver}, which
 * {@code .ci/run} installs) driving the console of a real {@link ServerProcess} over HTTPS.
 * Screenshots go to {@code target/console-screenshots/}, one per call of {@link #screenshot}.
 *
 * <p>A Chromium start costs seconds on a loaded machine and the console tests open about twenty
 * windows, so {@link #close()} keeps the browser for the next {@link #open}: the old tab is closed,
 * the console origin's storage and the browser's cookies and HTTP cache are cleared, downloads go
 * back to Chromium's default, and the next user gets a new tab (a fresh sessionStorage, where the
 * console keeps its session) at 1280 x 900. The kept browsers quit when the test JVM exits.
 */
public final class ConsoleBrowser implements AutoCloseable {
    static final Path CHROMIUM = Path.of(System.getProperty("holdfast.test.chromium", "/usr/bin/chromium"));
    static final Path CHROMEDRIVER = Path.of(System.getProperty("holdfast.test.chromedriver", "/usr/bin/chromedriver"));
    static final Path SCREENSHOTS = Path.of("target", "console-screenshots").toAbsolutePath();
    /** Long enough for a loaded 2-core CI machine; every wait ends as soon as its condition holds. */
    static final Duration WAIT = Duration.ofSeconds(30);

    /** Selenium warns on every start that Chromium is newer than its newest CDP table; WebDriver needs none of it. */
    private static final java.util.logging.Logger CDP_LOG = java.util.logging.Logger.getLogger("org.openqa.selenium.devtools");

    static {
        CDP_LOG.setLevel(java.util.logging.Level.SEVERE);
    }

    /** Browsers a closed ConsoleBrowser left for the next {@link #open}, each on a fresh blank tab. */
    private static final Deque<ChromeDriver> IDLE = new ArrayDeque<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ConsoleBrowser::quitIdle, "console-browsers-quit"));
    }

    private final ServerProcess server;
    private final String label;
    private final ChromeDriver driver;

    private ConsoleBrowser(ServerProcess server, String label, ChromeDriver driver) {
        this.server = server;
        this.label = label;
        this.driver = driver;
    }

    /** A browser window of 1280 x 900 on the server's console, not logged in. */
    public static ConsoleBrowser open(ServerProcess server, String label) {
        ChromeDriver kept = takeIdle();
        if (kept != null) {
            kept.manage().window().setSize(new Dimension(1280, 900));
            return new ConsoleBrowser(server, label, kept);
        }
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            throw new IllegalStateException("the console tests need Debian's chromium and chromium-driver: "
                    + "apt-get install -y chromium chromium-driver (.ci/run installs them)");
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // The flags the machine needs: no sandbox as root, and no background calls to Google's
        // hosts, which this closed network refuses.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--disable-quic", "--window-size=1280,900", "--lang=en-US");
        // The server's certificate is self-signed; the REST tests pin it, the browser accepts it.
        options.setAcceptInsecureCerts(true);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                // claimed: Selenium probes a port below the ephemeral range and binds it later, where a
                // test JVM beside this one may have claimed it for a server
                .usingPort(TestPorts.claim())
                .build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(WAIT);
        return new ConsoleBrowser(server, label, driver);
    }

    public WebDriver driver() {
        return driver;
    }

    /** The console's base address, {@code https://127.0.0.1:PORT/}. */
    public String baseUrl() {
        return (server.tls() ? "https" : "http") + "://127.0.0.1:" + server.httpPort() + "/";
    }

    /** Opens a console route such as {@code volumes/vm1} (the part after {@code #/}). */
    public ConsoleBrowser go(String route) {
        driver.get(baseUrl() + "#/" + route);
        return this;
    }

    /** Logs in through the login form and waits until the page shows who is logged in. */
    public ConsoleBrowser login(String user, String password) {
        go("login");
        fillLogin(user, password);
        awaitVisible(test("who"));
        return this;
    }

    /** Fills the login form and submits it, without waiting for the outcome. */
    public void fillLogin(String user, String password) {
        WebElement name = awaitVisible(By.name("username"));
        name.clear();
        name.sendKeys(user);
        WebElement pass = driver.findElement(By.name("password"));
        pass.clear();
        pass.sendKeys(password);
        driver.findElement(test("login-submit")).click();
    }

    /** The first admin's password, from {@code <data-dir>/initial-admin-password}. */
    public static String initialAdminPassword(ServerProcess server) {
        try {
            return Files.readString(server.dataDir().resolve("initial-admin-password"), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The elements marked {@code data-test="name"}, the console's stable hooks for tests. */
    public static By test(String name) {
        return By.cssSelector("[data-test='" + name + "']");
    }

    public WebElement awaitVisible(By by) {
        return new WebDriverWait(driver, WAIT).until(ExpectedConditions.visibilityOfElementLocated(by));
    }

    public void awaitText(By by, String text) {
        new WebDriverWait(driver, WAIT).until(ExpectedConditions.textToBePresentInElementLocated(by, text));
    }

    public void awaitGone(By by) {
        new WebDriverWait(driver, WAIT).until(ExpectedConditions.invisibilityOfElementLocated(by));
    }

    public List<WebElement> all(By by) {
        return driver.findElements(by);
    }

    /** Resizes the window to a phone's width (390 x 844 CSS pixels). */
    public ConsoleBrowser phone() {
        driver.manage().window().setSize(new Dimension(390, 844));
        return this;
    }

    /** Saves a PNG of the window as {@code target/console-screenshots/<label>-<name>.png}. */
    public Path screenshot(String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            Path target = SCREENSHOTS.resolve(label + "-" + name + ".png");
            Path png = driver.getScreenshotAs(OutputType.FILE).toPath();
            Files.move(png, target, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Leaves the browser for the next {@link #open}, on a new blank tab with nothing of this use left
     * (see the class comment); quits it instead if that cleaning fails.
     */
    @Override
    public void close() {
        try {
            String used = driver.getWindowHandle();
            driver.switchTo().newWindow(WindowType.TAB);
            String fresh = driver.getWindowHandle();
            driver.switchTo().window(used).close();
            driver.switchTo().window(fresh);
            String origin = baseUrl().substring(0, baseUrl().length() - 1);
            driver.executeCdpCommand("Storage.clearDataForOrigin", Map.of("origin", origin, "storageTypes", "all"));
            driver.executeCdpCommand("Network.clearBrowserCookies", Map.of());
            // and the HTTP cache: the next use loads the console cold, as a browser of its own did
            driver.executeCdpCommand("Network.clearBrowserCache", Map.of());
            driver.executeCdpCommand("Browser.setDownloadBehavior", Map.of("behavior", "default"));
        } catch (WebDriverException e) {
            driver.quit();
            return;
        }
        synchronized (IDLE) {
            IDLE.push(driver);
        }
    }

    private static ChromeDriver takeIdle() {
        synchronized (IDLE) {
            return IDLE.poll();
        }
    }

    private static void quitIdle() {
        for (ChromeDriver d = takeIdle(); d != null; d = takeIdle()) {
            try {
                d.quit();
            } catch (WebDriverException e) {
                // the JVM is ending; a browser that will not quit cleanly goes with its driver process
            }
        }
    }
}
