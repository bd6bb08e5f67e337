package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A viewer in the console sees no control that changes anything (no delete, hold, GC start, token
 * creation), and the API refuses those calls anyway when the viewer's own session token makes them
 * directly. An admin's pages show such controls, so the check can find them.
 */
@ExtendWith(SharedConsoleServer.class)
class ConsoleAccessTest {
    private static final LogDir LOGS = new LogDir("ConsoleAccessTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String VIEWER = "vera";
    private static final String VIEWER_PASSWORD = "viewer-password-1";
    /** Labels of controls that change state; a viewer must see none of them enabled. */
    private static final Pattern CHANGES = Pattern.compile(
            "(?i)\\b(delete|remove|hold|release|lock|unlock|start|run gc|reclaim|verify now|fsck|create|new|revoke|cancel|assign|save|"
                    + "edit|disable|enable|reset|download)\\b");
    /** Pages a viewer may open, with the volume and snapshot the setup backed up. */
    private static final List<String> VIEWER_PAGES = List.of("", "volumes", "volumes/acc1", "volumes/acc1/snapshots/1", "policies", "jobs");
    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void setUp(ServerProcess shared) {
        server = shared;
        Path image = VolumeImage.generate(7, 1 << 20).writeTo(work.resolve("acc1.img"));
        new AgentProcess(LOGS).backup(server, "acc1", image, work.resolve("state"));
        HttpResponse<String> user = server.call("POST", "/api/v1/users",
                "{\"name\":\"" + VIEWER + "\",\"role\":\"viewer\",\"password\":\"" + VIEWER_PASSWORD + "\"}");
        assertThat(user.statusCode()).as(user.body()).isEqualTo(201);
    }

    /** Enabled, visible buttons and links in the page's main part whose label says they change something. */
    @SuppressWarnings("unchecked")
    private static List<String> changingControls(ConsoleBrowser b) {
        // read in one script, so that a list re-rendered by its poll cannot leave a stale element behind
        List<String> labels = (List<String>) ((JavascriptExecutor) b.driver()).executeScript(
                "return [...document.querySelectorAll('main button, main a, main input[type=submit]')]"
                        + ".filter(e => !e.disabled && e.getClientRects().length > 0)"
                        + ".map(e => ((e.innerText || e.value || '') + ' ' + (e.getAttribute('aria-label') || '')).trim());");
        return labels.stream().filter(label -> CHANGES.matcher(label).find()).toList();
    }

    /** Opens a route and gives its first load a moment (every page loads at once and then polls). */
    private static void open(ConsoleBrowser b, String route) {
        b.go(route);
        b.awaitVisible(By.cssSelector("main h1"));
        ServerProcess.sleep(1000);
    }

    @Test
    void viewer_seesNoChangingControls_adminDoes() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "access")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(server));
            open(b, "tokens");
            assertThat(changingControls(b)).as("the admin's tokens page").anyMatch(l -> l.contains("Create token"))
                    .anyMatch(l -> l.contains("Revoke"));
            open(b, "users");
            assertThat(changingControls(b)).as("the admin's users page").anyMatch(l -> l.contains("Delete user " + VIEWER));
            // the admin's user controls work: create, reset the password, delete (after the confirmation)
            ConsoleForms.type(b, "user-form", "name", "temp");
            ConsoleForms.choose(b, "user-form", "role", "operator");
            ConsoleForms.type(b, "user-form", "password", "temp-password-1");
            b.driver().findElement(ConsoleBrowser.test("user-create")).click();
            b.awaitVisible(By.cssSelector("[data-user='temp'] [data-test='user-password']")).click();
            ConsoleForms.type(b, "password-form", "new-password", "temp-password-2");
            b.driver().findElement(ConsoleBrowser.test("password-save")).click();
            b.awaitText(ConsoleBrowser.test("user-notice"), "Password of temp changed");
            assertThat(server.callAs("none", "POST", "/api/v1/auth/login",
                    "{\"username\":\"temp\",\"password\":\"temp-password-2\"}").statusCode()).isEqualTo(200);
            b.screenshot("users");
            b.driver().findElement(By.cssSelector("[data-user='temp'] [data-test='user-delete']")).click();
            b.awaitVisible(ConsoleBrowser.test("confirm-ok")).click();
            b.awaitGone(By.cssSelector("[data-user='temp']"));
            assertThat(server.get("/api/v1/users/temp").statusCode()).isEqualTo(404);
            // the audit log, filtered on the server to user changes: the viewer's creation is there, nothing else
            open(b, "audit");
            ConsoleForms.type(b, "audit-filter", "action", "user.create");
            b.driver().findElement(ConsoleBrowser.test("audit-apply")).click();
            // rows are replaced as pages load: a row read while it goes is read again
            new WebDriverWait(b.driver(), ConsoleBrowser.WAIT).ignoring(StaleElementReferenceException.class).until(d -> {
                List<WebElement> entries = d.findElements(ConsoleBrowser.test("audit-entry"));
                return !entries.isEmpty() && entries.stream().allMatch(e -> "user.create".equals(e.getAttribute("data-action")));
            });
            assertThat(b.driver().findElement(ConsoleBrowser.test("audit")).getText()).contains("user:" + VIEWER);
            b.screenshot("audit");
            b.driver().findElement(ConsoleBrowser.test("logout")).click();
            b.awaitVisible(ConsoleBrowser.test("login-form"));

            b.login(VIEWER, VIEWER_PASSWORD);
            b.awaitText(ConsoleBrowser.test("who"), "viewer");
            for (String admin : List.of("tokens", "users", "audit", "agents")) {
                assertThat(b.all(By.cssSelector("[data-nav='" + admin + "']"))).as("nav link %s", admin).isEmpty();
            }
            assertThat(b.all(By.cssSelector("[data-nav='volumes']"))).hasSize(1);
            for (String page : VIEWER_PAGES) {
                open(b, page);
                assertThat(changingControls(b)).as("controls a viewer sees on #/%s", page).isEmpty();
                if (page.contains("snapshots")) {
                    b.screenshot("viewer-snapshot");
                }
            }
            // typing an admin page's address leads back to the dashboard
            for (String admin : List.of("tokens", "users", "audit")) {
                b.go(admin);
                b.awaitVisible(By.cssSelector("main h1"));
                assertThat(b.driver().getCurrentUrl()).as(admin).endsWith("#/");
            }
        }
    }

    @Test
    void viewer_directApiCalls_areRefused403AndChangeNothing() throws Exception {
        HttpResponse<String> login = server.callAs("none", "POST", "/api/v1/auth/login",
                "{\"username\":\"" + VIEWER + "\",\"password\":\"" + VIEWER_PASSWORD + "\"}");
        assertThat(login.statusCode()).as(login.body()).isEqualTo(200);
        String token = JSON.readTree(login.body()).get("token").asText();
        String tokensBefore = server.get("/api/v1/tokens").body();
        String jobsBefore = server.get("/api/v1/jobs").body();
        String[][] calls = {
                {"DELETE", "/api/v1/volumes/acc1/snapshots/1", null},
                {"PUT", "/api/v1/volumes/acc1/snapshots/1/hold", "{}"},
                {"DELETE", "/api/v1/volumes/acc1", null},
                {"POST", "/api/v1/gc/runs", null},
                {"POST", "/api/v1/gc/reclaim", null},
                {"POST", "/api/v1/tokens", "{\"name\":\"sneaky\",\"role\":\"agent\"}"},
                {"POST", "/api/v1/users", "{\"name\":\"sneaky\",\"role\":\"admin\",\"password\":\"sneaky-password\"}"},
                {"POST", "/api/v1/retention/policies", "{\"name\":\"p\",\"keepLast\":1}"},
                {"GET", "/api/v1/volumes/acc1/snapshots/1/image", null}};
        for (String[] c : calls) {
            HttpResponse<String> r = server.callAs(token, c[0], c[1], c[2]);
            assertThat(r.statusCode()).as("%s %s: %s", c[0], c[1], r.body()).isEqualTo(403);
            assertThat(JSON.readTree(r.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:forbidden");
        }
        JsonNode snapshots = JSON.readTree(server.get("/api/v1/volumes/acc1/snapshots").body());
        assertThat(snapshots.size()).as("snapshots: %s", snapshots).isEqualTo(1);
        assertThat(server.get("/api/v1/tokens").body()).isEqualTo(tokensBefore);
        assertThat(server.get("/api/v1/users/sneaky").statusCode()).isEqualTo(404);
        assertThat(server.get("/api/v1/jobs").body()).as("no job started").isEqualTo(jobsBefore);
    }
}
