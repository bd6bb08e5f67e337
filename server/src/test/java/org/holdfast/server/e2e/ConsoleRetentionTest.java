package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Retention from the console in real Chromium against a real server and real agent processes:
 * a named policy created with its live preview and assigned to a volume, a hold placed, and a
 * snapshot deleted through the confirmation; each change checked over the REST API too. In this
 * order: the preview counts the volume's two snapshots before one is deleted.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(SharedConsoleServer.class)
class ConsoleRetentionTest {
    private static final LogDir LOGS = new LogDir("ConsoleRetentionTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void backUp(ServerProcess shared) {
        server = shared;
        AgentProcess agent = new AgentProcess(LOGS);
        VolumeImage img = VolumeImage.generate(21, 1 << 20);
        for (int i = 1; i <= 2; i++) { // two snapshots: one to keep and hold, one to delete (an agent run costs ~10 s)
            agent.backup(server, "ret-vol", img.scribble(4).writeTo(work.resolve("ret-" + i + ".img")), work.resolve("state"));
        }
    }

    private static ConsoleBrowser admin(String label) {
        return ConsoleBrowser.open(server, label).login("admin", ConsoleBrowser.initialAdminPassword(server));
    }

    private static JsonNode api(String path) throws Exception {
        return JSON.readTree(server.get(path).body());
    }

    @Test
    @Order(1)
    void policy_createWithPreview_assignToAVolume() throws Exception {
        try (ConsoleBrowser b = admin("policies")) {
            b.go("policies");
            b.awaitVisible(ConsoleBrowser.test("policy-form"));
            b.driver().findElement(ConsoleBrowser.test("policy-name")).sendKeys("gold");
            var text = b.driver().findElement(ConsoleBrowser.test("policy-text"));
            // the shared server holds other classes' volumes too: the preview is of ret-vol
            b.awaitVisible(By.cssSelector("[data-test='preview-volume'] option[value='ret-vol']"));
            new Select(b.driver().findElement(ConsoleBrowser.test("preview-volume"))).selectByValue("ret-vol");
            ConsoleForms.replace(b, text, "keep-last=1");
            // the preview of ret-vol under keep-last=1, now: the older one is still kept by the expiry its
            // earlier policy (the default 30d) recorded, which a new policy never shortens
            b.awaitText(ConsoleBrowser.test("preview-summary"), "2 kept, 0 deleted");
            b.awaitText(By.cssSelector("[data-preview='2']"), "keep-last 1 of 1");
            assertThat(b.driver().findElement(By.cssSelector("[data-preview='1']")).getText()).contains("earlier policy");
            // in 90 days that expiry has passed: the newest stays, the older goes
            new Select(b.driver().findElement(ConsoleBrowser.test("preview-as-of"))).selectByValue("90");
            b.awaitText(ConsoleBrowser.test("preview-summary"), "1 kept, 1 deleted");
            assertThat(b.driver().findElement(By.cssSelector("[data-preview='1']")).getText()).contains("deleted");
            // a policy the server cannot parse: its problem detail, no preview
            text.sendKeys(",fortnightly=3");
            b.awaitVisible(By.cssSelector("[data-test='preview'] [data-test='problem']"));
            ConsoleForms.replace(b, text, "keep-last=1");
            b.awaitText(ConsoleBrowser.test("preview-summary"), "1 kept, 1 deleted");

            b.driver().findElement(ConsoleBrowser.test("policy-save")).click();
            b.awaitText(ConsoleBrowser.test("notice"), "created");
            new Select(b.awaitVisible(ConsoleBrowser.test("assign-volume"))).selectByValue("ret-vol");
            b.driver().findElement(ConsoleBrowser.test("assign")).click();
            b.awaitText(ConsoleBrowser.test("notice"), "now follows");
            b.awaitText(By.cssSelector("tr[data-policy='gold'] [data-test='policy-volumes']"), "ret-vol");
            b.screenshot("assigned");
        }
        assertThat(api("/api/v1/volumes/ret-vol/retention").path("name").asText()).isEqualTo("gold");
        assertThat(api("/api/v1/retention/policies/gold").path("policy").asText()).isEqualTo("keep-last=1");
    }

    @Test
    @Order(2)
    void snapshot_placeHold_thenDeleteAnother() throws Exception {
        try (ConsoleBrowser b = admin("snapshot")) {
            b.go("volumes/ret-vol/snapshots/2"); // the newest
            b.awaitVisible(ConsoleBrowser.test("hold")).click();
            b.awaitVisible(ConsoleBrowser.test("held"));
            b.awaitText(ConsoleBrowser.test("notice"), "Hold placed");
            b.awaitVisible(ConsoleBrowser.test("release"));
            b.screenshot("held");
            assertThat(api("/api/v1/volumes/ret-vol/snapshots/2/hold").path("held").asBoolean()).isTrue();
            // a held (and newest) snapshot cannot be deleted: the button says why
            assertThat(b.driver().findElement(ConsoleBrowser.test("delete-snapshot")).isEnabled()).isFalse();

            b.go("volumes/ret-vol/snapshots/1");
            b.awaitText(ConsoleBrowser.test("snapshot-id"), "ret-vol@1");
            b.awaitVisible(ConsoleBrowser.test("delete-snapshot")).click();
            var dialog = b.awaitVisible(By.cssSelector("dialog.confirm"));
            assertThat(dialog.getText()).contains("ret-vol@1").contains("cannot be undone");
            b.screenshot("delete-confirm");
            dialog.findElement(ConsoleBrowser.test("confirm-ok")).click();
            // back on the volume page, without snapshot 1
            new WebDriverWait(b.driver(), ConsoleBrowser.WAIT).until(d -> d.getCurrentUrl().endsWith("#/volumes/ret-vol"));
            b.awaitVisible(By.cssSelector("[data-test='snapshots'] tr[data-snapshot='2']"));
            assertThat(b.all(By.cssSelector("[data-test='snapshots'] tr[data-snapshot='1']"))).isEmpty();
            assertThat(b.all(By.cssSelector("[data-test='timeline'] li[data-snapshot]"))).extracting(e -> e.getAttribute("data-snapshot"))
                    .containsExactly("2");
            b.screenshot("after-delete");
        }
        assertThat(server.get("/api/v1/volumes/ret-vol/snapshots/1").statusCode()).isEqualTo(404);
    }
}
