package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.support.ui.WebDriverWait;

/** The console in real Chromium against a real server: logging in, a wrong password, logging out, a phone-width screen. */
@ExtendWith(SharedConsoleServer.class)
class ConsoleLoginTest {
    private static ServerProcess server;

    @BeforeAll
    static void setUp(ServerProcess shared) {
        server = shared;
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
    @Test
    void phoneWidth_menuOpensAndPagesFitWithoutSidewaysScrolling() {
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "phone")) {
            b.phone();
            b.go("volumes");
            b.fillLogin("admin", ConsoleBrowser.initialAdminPassword(server));
            b.awaitText(ConsoleBrowser.test("who"), "admin");
            awaitUrl(b, "#/volumes");
            assertThat(b.driver().findElement(By.id("nav")).isDisplayed()).as("at phone width the navigation folds behind the menu button")
                    .isFalse();
            openMenu(b);
            assertThat(b.driver().findElement(By.cssSelector("button.menu-toggle")).getAttribute("aria-expanded")).isEqualTo("true");
            b.screenshot("phone-menu");
            for (String page : List.of("jobs", "policies", "tokens", "volumes", "dashboard")) {
                if (!b.driver().findElement(By.id("nav")).isDisplayed()) {
                    openMenu(b);
                }
                b.driver().findElement(By.cssSelector("[data-nav=" + page + "]")).click();
                awaitUrl(b, page.equals("dashboard") ? "#/" : "#/" + page);
                b.awaitVisible(By.cssSelector("main h1"));
                long overflow = ((Number) ((JavascriptExecutor) b.driver()).executeScript(
                        "return document.documentElement.scrollWidth - window.innerWidth;")).longValue();
                assertThat(overflow).as("page %s scrolls sideways at 390 px by", page).isLessThanOrEqualTo(0);
                assertThat(b.driver().findElement(By.id("nav")).isDisplayed()).as("choosing a page folds the menu again").isFalse();
            }
            b.screenshot("phone-dashboard");
        }
    }

    /** Clicks Menu until the navigation shows (a click racing the route change after login is undone by it). */
    private static void openMenu(ConsoleBrowser b) {
        new WebDriverWait(b.driver(), Duration.ofSeconds(20)).pollingEvery(Duration.ofSeconds(1)).until(d -> {
            if (!d.findElement(By.id("nav")).isDisplayed()) {
                d.findElement(By.cssSelector("button.menu-toggle")).click();
            }
            return d.findElement(By.id("nav")).isDisplayed();
        });
    }

    private static void awaitUrl(ConsoleBrowser b, String end) {
        new WebDriverWait(b.driver(), Duration.ofSeconds(10)).until(d -> d.getCurrentUrl().endsWith(end));
    }
}
