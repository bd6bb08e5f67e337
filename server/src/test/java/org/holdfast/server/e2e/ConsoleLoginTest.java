package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The console in real Chromium against a real server: logging in, a wrong password, logging out. */
class ConsoleLoginTest {
    private static final LogDir LOGS = new LogDir("ConsoleLoginTest");
    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void startServer() {
        server = ServerProcess.start(work, "sungem", LOGS);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void login_wrongPassword_isRefusedWithTheProblemDetail() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "login")) {
            b.go("volumes");
            b.fillLogin("admin", "not-the-password");
            b.awaitVisible(ConsoleBrowser.test("problem"));
            String message = b.driver().findElement(ConsoleBrowser.test("problem")).getText();
            b.screenshot("wrong-password");
            assertThat(message).containsIgnoringCase("HTTP 401");
            assertThat(b.all(ConsoleBrowser.test("who"))).isEmpty();
        }
    }

    @Test
    void login_initialAdminPassword_showsTheUserAndReturnsToTheAskedPage() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "login")) {
            b.go("volumes");
            b.fillLogin("admin", ConsoleBrowser.initialAdminPassword(server));
            b.awaitText(ConsoleBrowser.test("who"), "admin");
            assertThat(b.driver().getCurrentUrl()).endsWith("#/volumes");
            b.screenshot("logged-in");

            b.driver().findElement(ConsoleBrowser.test("logout")).click();
            b.awaitVisible(ConsoleBrowser.test("login-notice"));
            assertThat(b.driver().findElement(ConsoleBrowser.test("login-notice")).getText()).contains("logged out");
            // The session token is gone from the server too: the volumes page asks for a login again.
            b.go("volumes");
            b.awaitVisible(ConsoleBrowser.test("login-form"));
        }
    }
}
