package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;

/**
 * The console when its session ends: it expires (the server runs with 15 s sessions), an admin's
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
        server = ServerProcess.start(work, "sungem", Map.of("holdfast.security.session-timeout", "15s"), LOGS);
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
            b.go("volumes");
            b.awaitVisible(By.cssSelector("main h1"));
            // the page polls; the first call after the 15 s are over is refused, and the console says why
            assertThat(notice(b)).contains("session has ended").contains("expired").contains("Log in again");
            assertThat(b.driver().getCurrentUrl()).contains("#/login").contains("volumes");
            assertThat(ConsoleForms.sessionToken(b)).isNull();
            assertThat(server.callAs(token, "GET", "/api/v1/auth/me", null).statusCode()).isEqualTo(401);
            b.screenshot("expired");
        }
    }

    @Test
    void session_userChangedByAnAdmin_endsAtOnce_loginReturnsToThePage() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "session")) {
            b.login(OPERATOR, OPERATOR_PASSWORD);
            b.go("agents");
            b.awaitVisible(ConsoleBrowser.test("agents"));
            HttpResponse<String> demote = server.call("PUT", "/api/v1/users/" + OPERATOR, "{\"role\":\"viewer\"}");
            assertThat(demote.statusCode()).as(demote.body()).isEqualTo(200);
            assertThat(notice(b)).contains("session has ended").contains("Log in again");
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
