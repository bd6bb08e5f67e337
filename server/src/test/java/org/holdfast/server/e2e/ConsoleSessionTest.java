package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.support.ui.Select;

/**
 * The console when its session ends: it expires (the server runs with 25 s sessions), an admin's
 * change to the user ends it, or the user logs out. Each time the console returns to the login
 * page and says why, and the old session token no longer works on the server.
 */
class ConsoleSessionTest {
    private static final LogDir LOGS = new LogDir("ConsoleSessionTest");
    private static final String OPERATOR = "sam";
    private static final String OPERATOR_PASSWORD = "operator-password-1";
    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void startServer() {
        server = ServerProcess.start(work, "sungem", Map.of("holdfast.security.session-timeout", "25s"), LOGS);
        HttpResponse<String> user = server.call("POST", "/api/v1/users",
                "{\"name\":\"" + OPERATOR + "\",\"role\":\"operator\",\"password\":\"" + OPERATOR_PASSWORD + "\"}");
        assertThat(user.statusCode()).as(user.body()).isEqualTo(201);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private static String notice(ConsoleBrowser b) {
        return b.awaitVisible(ConsoleBrowser.test("login-notice")).getText();
    }

    @Test
    void session_expires_consoleReturnsToLoginSayingSo() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "session")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(server));
            String token = ConsoleForms.sessionToken(b);
            String expiresAt = (String) ((JavascriptExecutor) b.driver()).executeScript(
                    "return JSON.parse(sessionStorage.getItem('holdfast.session')).expiresAt;");
            b.go("volumes");
            b.awaitVisible(By.cssSelector("main h1"));
            ServerProcess.sleep(Math.max(0, Duration.between(Instant.now(), Instant.parse(expiresAt)).toMillis()));
            // the page polls; its first call after the expiry is refused, and the console says why
            assertThat(notice(b)).contains("session has ended").contains("expired").contains("Log in again");
            assertThat(b.driver().getCurrentUrl()).contains("#/login").contains("volumes");
            assertThat(ConsoleForms.sessionToken(b)).isNull();
            assertThat(server.callAs(token, "GET", "/api/v1/auth/me", null).statusCode()).isEqualTo(401);
            b.screenshot("expired");
        }
    }

    @Test
    void session_userChangedByAnAdminInTheConsole_endsAtOnce_loginBringsTheNewRole() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "session")) {
            b.login(OPERATOR, OPERATOR_PASSWORD);
            b.go("agents");
            b.awaitVisible(ConsoleBrowser.test("agents"));
            // an admin, in a browser of their own, makes the operator a viewer on the users page
            try (ConsoleBrowser admin = ConsoleBrowser.open(server, "session-admin")) {
                admin.login("admin", ConsoleBrowser.initialAdminPassword(server));
                admin.go("users");
                new Select(admin.awaitVisible(By.cssSelector("[data-user='" + OPERATOR + "'] [data-test='user-role']")))
                        .selectByValue("viewer");
                admin.awaitText(ConsoleBrowser.test("user-notice"), OPERATOR + " is now viewer");
            }
            assertThat(server.get("/api/v1/users/" + OPERATOR).body()).contains("\"role\":\"viewer\"");
            assertThat(notice(b)).contains("session has ended: unknown or ended session").contains("Log in again");
            b.screenshot("revoked");
            // logging in again brings the user back, with the new role's rights: agents is an operator's page
            b.fillLogin(OPERATOR, OPERATOR_PASSWORD);
            b.awaitText(ConsoleBrowser.test("who"), "viewer");
            assertThat(b.driver().getCurrentUrl()).endsWith("#/");
            assertThat(b.all(By.cssSelector("[data-nav='agents']"))).isEmpty();
        }
    }

    @Test
    void logout_endsTheSessionOnTheServer() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "session")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(server));
            String token = ConsoleForms.sessionToken(b);
            assertThat(server.callAs(token, "GET", "/api/v1/auth/me", null).statusCode()).isEqualTo(200);
            b.driver().findElement(ConsoleBrowser.test("logout")).click();
            assertThat(notice(b)).contains("logged out");
            assertThat(ConsoleForms.sessionToken(b)).isNull();
            assertThat(server.callAs(token, "GET", "/api/v1/auth/me", null).statusCode()).isEqualTo(401);
        }
    }
}
