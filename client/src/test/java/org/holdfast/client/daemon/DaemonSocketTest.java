package org.holdfast.client.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How {@code status} and {@code run-now} find the daemon when given neither --socket nor --config. */
class DaemonSocketTest {
    @TempDir
    Path dir;

    private Map<String, String> env() {
        return Map.of("HOME", dir.resolve("home").toString(), "XDG_STATE_HOME", dir.resolve("xdg").toString());
    }

    @Test
    void find_noConfigFileDaemonOnDefaultStateDir_findsItsSocket() throws Exception {
        Path sock = Files.createFile(Files.createDirectories(dir.resolve("xdg/holdfast-agent")).resolve("agent.sock"));
        assertThat(DaemonSocket.find(dir.resolve("missing.yaml"), env())).isEqualTo(sock);
    }

    @Test
    void find_configFileNamesStateDir_itsSocketComesFirst() throws Exception {
        Files.createFile(Files.createDirectories(dir.resolve("xdg/holdfast-agent")).resolve("agent.sock"));
        Path configured = Files.createFile(Files.createDirectories(dir.resolve("svc")).resolve("agent.sock"));
        Path config = Files.writeString(dir.resolve("agent.yaml"), """
                server: 127.0.0.1:7070
                trust: {no-tls: true}
                state-dir: %s
                volumes:
                  - {name: a, source: /img/a, schedule: "@daily"}
                """.formatted(dir.resolve("svc")));
        assertThat(DaemonSocket.find(config, env())).isEqualTo(configured);
    }

    @Test
    void find_invalidConfigFile_passedOverForTheDefaultStateDir() throws Exception {
        Path sock = Files.createFile(Files.createDirectories(dir.resolve("xdg/holdfast-agent")).resolve("agent.sock"));
        Path config = Files.writeString(dir.resolve("agent.yaml"), "server: [\n");
        assertThat(DaemonSocket.find(config, env())).isEqualTo(sock);
    }

    @Test
    void find_variableSet_usedAsIs() {
        Path named = dir.resolve("elsewhere.sock");
        assertThat(DaemonSocket.find(dir.resolve("missing.yaml"), Map.of(DaemonSocket.ENV, named.toString()))).isEqualTo(named);
    }

    @Test
    void find_noSocketAnywhere_networkErrorNamingEveryPlaceAndWhatToPass() {
        assertThatThrownBy(() -> DaemonSocket.find(dir.resolve("missing.yaml"), env()))
                .isInstanceOfSatisfying(AgentException.class, e -> {
                    assertThat(e.exitCode()).isEqualTo(ExitCode.NETWORK);
                    assertThat(e.getMessage()).isEqualTo("no agent daemon socket found; looked at "
                            + dir.resolve("xdg/holdfast-agent/agent.sock") + " (this user's default state directory), "
                            + "/var/lib/holdfast-agent/agent.sock (the systemd unit's state directory)");
                    assertThat(e.hint()).contains("--socket PATH").contains("--config FILE");
                });
    }
}
