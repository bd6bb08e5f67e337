package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;

/**
 * An admin makes an agent token in the console; the command line the console shows, run by the
 * real agent against the real server, backs up a volume with that token. Once the token is revoked
 * in the console, the same command is refused.
 */
@ExtendWith(SharedConsoleServer.class)
class ConsoleTokensTest {
    private static final LogDir LOGS = new LogDir("ConsoleTokensTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void setUp(ServerProcess shared) {
        server = shared;
    }

    @Test
    void createAgentToken_shownCommandBacksUp_revokedTokenIsRefused() throws Exception {
        Path image = VolumeImage.generate(13, 2 << 20).writeTo(work.resolve("web1.img"));
        Path tokenFile = work.resolve("web1.token");
        AgentProcess agents = new AgentProcess(LOGS);
        try (ConsoleBrowser b = ConsoleBrowser.open(server, "tokens")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(server));
            b.go("tokens");
            ConsoleForms.type(b, "token-form", "name", "web-host");
            ConsoleForms.choose(b, "token-form", "role", "agent");
            ConsoleForms.type(b, "token-form", "volumes", "web1");
            b.driver().findElement(ConsoleBrowser.test("token-create")).click();

            String command = b.awaitVisible(ConsoleBrowser.test("agent-command")).getText().strip();
            String secret = b.driver().findElement(ConsoleBrowser.test("token-secret")).getText().strip();
            b.awaitVisible(By.cssSelector("[data-token='web-host']"));
            b.screenshot("created");
            assertThat(secret).startsWith("hft_");
            assertThat(command).startsWith("holdfast-agent backup ")
                    .contains("--server 127.0.0.1:" + server.ingestPort())
                    .contains("--fingerprint " + server.fingerprint())
                    .contains("--volume web1")
                    .doesNotContain(secret); // the token goes in a file, never on a command line (ps shows those)
            // the save command writes exactly the secret
            assertThat(b.driver().findElement(ConsoleBrowser.test("token-save-command")).getText()).contains(secret);

            Files.createFile(tokenFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tokenFile, secret + "\n", StandardCharsets.UTF_8);
            String[] args = agentArgs(command, image, tokenFile);
            AgentResult backup = agents.run(args);
            assertThat(backup.exitCode()).as("the console's command should back up:\n%s\n%s", backup, server.diagnostics()).isZero();
            assertThat(BackupSummary.parse(backup).volumeBytes()).isEqualTo(Files.size(image));

            // the server saw that token, not the harness's: the agents list names it with the backup
            JsonNode agentList = JSON.readTree(server.get("/api/v1/agents").body());
            JsonNode web = null;
            for (JsonNode a : agentList) {
                if (a.get("tokenName").asText().equals("web-host")) {
                    web = a;
                }
            }
            assertThat(web).as("agents: %s", agentList).isNotNull();
            assertThat(web.get("volumes").get(0).get("volume").asText()).isEqualTo("web1");
            assertThat(web.get("volumes").get(0).get("result").asText()).isEqualTo("success");

            b.driver().findElement(ConsoleBrowser.test("token-dismiss")).click();
            b.awaitGone(ConsoleBrowser.test("token-secret"));
            b.screenshot("list");
            b.go("agents");
            b.awaitVisible(By.cssSelector("[data-agent='web-host'] [data-test='agent-result']"));
            assertThat(b.driver().findElement(By.cssSelector("[data-agent='web-host']")).getText()).contains("success").contains("web1");
            b.screenshot("agents");

            b.go("tokens");
            b.awaitVisible(By.cssSelector("[data-token='web-host'] [data-test='token-revoke']")).click();
            b.awaitVisible(ConsoleBrowser.test("confirm-ok")).click();
            b.awaitText(By.cssSelector("[data-token='web-host']"), "revoked");
            b.screenshot("revoked");
            AgentResult refused = agents.run(args);
            assertThat(refused.exitCode()).as("a revoked token is rejected by the server (exit 4): %s", refused).isEqualTo(4);
        }
    }

    /** The console's command with this machine's image and token file, and the harness's state folder. */
    private static String[] agentArgs(String command, Path image, Path tokenFile) {
        List<String> words = new ArrayList<>(List.of(command.split("\\s+")));
        assertThat(words.subList(0, 2)).containsExactly("holdfast-agent", "backup");
        words.remove(0);
        int source = words.indexOf("/dev/DEVICE");
        int token = words.indexOf("/etc/holdfast/agent.token");
        assertThat(source).as("placeholder /dev/DEVICE in %s", command).isPositive();
        assertThat(token).as("placeholder token file in %s", command).isPositive();
        words.set(source, image.toString());
        words.set(token, tokenFile.toString());
        words.addAll(List.of("--state-dir", work.resolve("agent-state").toString(), "--json"));
        return words.toArray(String[]::new);
    }
}
