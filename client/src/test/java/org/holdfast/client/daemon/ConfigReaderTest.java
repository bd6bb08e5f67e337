package org.holdfast.client.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigReaderTest {
    private static final String FP = "AB:".repeat(31) + "AB";

    @TempDir
    Path dir;
    Path token;

    @BeforeEach
    void token() throws IOException {
        token = Files.writeString(dir.resolve("token"), "secret\n");
    }

    private AgentConfig read(String yaml) throws IOException {
        return ConfigReader.read(Files.writeString(dir.resolve("agent.yaml"), yaml), Map.of("HOME", "/home/op"));
    }

    /** The problems, one per line, of a file that must be refused. */
    private String problems(String yaml) {
        ConfigException e = (ConfigException) org.assertj.core.api.Assertions.catchThrowable(() -> read(yaml));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.exitCode()).isEqualTo(ExitCode.USAGE);
        return String.join("\n", e.problems());
    }

    @Test
    void read_everyField_parsed() throws IOException {
        AgentConfig c = read("""
                server: backup.example.com:7070
                trust:
                  fingerprint: "%s"
                token-file: %s
                state-dir: /var/lib/holdfast-agent
                retry:
                  attempts: 3
                  initial-backoff: 500ms
                  max-backoff: 2m
                volumes:
                  - name: vm-1
                    source: /dev/vg0/vm1
                    schedule: "0 2 * * *"
                    block-size: 65536
                    dirty-bitmap: true
                    hooks:
                      pre:
                        command: fsfreeze -f /srv
                        timeout: 10s
                      post: fsfreeze -u /srv
                """.formatted(FP, token));
        assertThat(c.server()).isEqualTo("backup.example.com:7070");
        assertThat(c.trust()).isEqualTo(new AgentConfig.Trust(FP, null, false));
        assertThat(c.tokenFile()).isEqualTo(token);
        assertThat(c.socket()).isEqualTo(Path.of("/var/lib/holdfast-agent/agent.sock"));
        assertThat(c.retry()).isEqualTo(new AgentConfig.Retry(3, Duration.ofMillis(500), Duration.ofMinutes(2)));
        AgentConfig.VolumeConfig v = c.volume("vm-1");
        assertThat(v.source()).isEqualTo(Path.of("/dev/vg0/vm1"));
        assertThat(v.blockSize()).isEqualTo(65536);
        assertThat(v.dirtyBitmap()).isTrue();
        assertThat(v.schedule().toString()).isEqualTo("0 2 * * *");
        assertThat(v.preHook()).isEqualTo(new AgentConfig.Hook("fsfreeze -f /srv", Duration.ofSeconds(10)));
        assertThat(v.postHook()).isEqualTo(new AgentConfig.Hook("fsfreeze -u /srv", ConfigReader.DEFAULT_HOOK_TIMEOUT));
    }

    @Test
    void read_minimalFile_defaults() throws IOException {
        AgentConfig c = read("""
                server: 127.0.0.1:7070
                trust: {no-tls: true}
                volumes:
                  - {name: a, source: /img/a, schedule: "@daily"}
                """);
        assertThat(c.tokenFile()).isNull();
        assertThat(c.retry()).isEqualTo(ConfigReader.DEFAULT_RETRY);
        assertThat(c.stateDir()).isEqualTo(Path.of("/home/op/.local/state/holdfast-agent"));
        assertThat(c.volume("a").preHook()).isNull();
        assertThat(c.volume("a").blockSize()).isZero();
    }

    @Test
    void defaultStateDir_systemdThenXdgThenHome() {
        assertThat(ConfigReader.defaultStateDir(Map.of("STATE_DIRECTORY", "/var/lib/holdfast-agent", "XDG_STATE_HOME", "/x")))
                .isEqualTo(Path.of("/var/lib/holdfast-agent"));
        assertThat(ConfigReader.defaultStateDir(Map.of("XDG_STATE_HOME", "/x", "HOME", "/h"))).isEqualTo(Path.of("/x/holdfast-agent"));
        assertThat(ConfigReader.defaultStateDir(Map.of("XDG_STATE_HOME", "relative", "HOME", "/h")))
                .isEqualTo(Path.of("/h/.local/state/holdfast-agent"));
    }

    @Test
    void read_badCron_namesLineFieldAndReason() {
        assertThat(problems("""
                server: 127.0.0.1:7070
                trust: {no-tls: true}
                volumes:
                  - name: a
                    source: /img/a
                    schedule: "0 25 * * *"
                """)).isEqualTo("line 6, volumes[0].schedule: hour field '25': 25 is out of range 0-23");
    }

    @Test
    void read_misspelledField_namesItAndTheKnownOnes() {
        String p = problems("""
                server: 127.0.0.1:7070
                trust: {no-tls: true}
                volumes:
                  - name: a
                    source: /img/a
                    shedule: "@daily"
                """);
        assertThat(p).contains("line 6, volumes[0].shedule: unknown field 'shedule' (known here: name, source, schedule, block-size, hooks, dirty-bitmap)")
                .contains("line 4, volumes[0].schedule: missing: a cron expression");
    }

    @Test
    void read_everythingWrong_everyProblemReportedInLineOrder() {
        String p = problems("""
                server: no-port-here:99999
                trust:
                  fingerprint: "%s"
                  no-tls: true
                token-file: /nonexistent/token
                retry:
                  attempts: 0
                  initial-backoff: soon
                volumes:
                  - name: .hidden
                    source: relative/a.img
                    schedule: "@daily"
                    block-size: 1000
                    hooks:
                      pre: ""
                  - name: b
                    source: /img/b
                    schedule: "@daily"
                  - name: b
                    source: /img/b2
                    schedule: "@daily"
                """.formatted(FP));
        assertThat(p.lines()).containsExactly(
                "line 1, server: 'no-port-here:99999' is not HOST:PORT: " + serverError("no-port-here:99999"),
                "line 3, trust: give exactly one of fingerprint, ca-cert or no-tls: true (found 2)",
                "line 5, token-file: /nonexistent/token does not exist",
                "line 7, retry.attempts: 0 is out of range 1 to 1000",
                "line 8, retry.initial-backoff: 'soon' is not a duration like 30s, 500ms, 5m or 2h",
                "line 10, volumes[0].name: invalid volume name '.hidden': use 1 to 128 letters, digits, '.', '_' or '-', not starting with '.'",
                "line 11, volumes[0].source: 'relative/a.img' is a relative path; write it absolute (a service's working directory is not yours)",
                "line 13, volumes[0].block-size: 1000 is not a power of two (512 to 1048576)",
                "line 15, volumes[0].hooks.pre: empty command; remove the hook or give a command",
                "line 19, volumes[2].name: volume 'b' is listed twice");
    }

    private static String serverError(String s) {
        try {
            org.holdfast.client.net.ServerAddress.parse(s);
            return "(parsed)";
        } catch (RuntimeException e) {
            return e.getMessage();
        }
    }

    @Test
    void read_missingServerTrustVolumes_eachNamed() {
        String p = problems("state-dir: /var/lib/x\n");
        assertThat(p).contains("line 1, server: missing").contains("line 1, trust: missing").contains("line 1, volumes: missing");
    }

    @Test
    void read_notYaml_namesTheLine() {
        String p = problems("""
                server: 127.0.0.1:7070
                volumes:
                  - name: "a
                """);
        assertThat(p).startsWith("line ").contains("not valid YAML");
    }

    @Test
    void read_duplicateKey_refused() {
        String p = problems("""
                server: 127.0.0.1:7070
                server: 127.0.0.1:7071
                trust: {no-tls: true}
                volumes:
                  - {name: a, source: /img/a, schedule: "@daily"}
                """);
        assertThat(p).isEqualTo("line 2, server: given twice; keep one");
    }

    @Test
    void read_missingFile_usageErrorNamingIt() {
        assertThatThrownBy(() -> ConfigReader.read(dir.resolve("nope.yaml"))).isInstanceOf(AgentException.class)
                .hasMessageContaining("nope.yaml does not exist");
    }

    @Test
    void configException_message_listsProblemsAndHint() {
        ConfigException e = (ConfigException) org.assertj.core.api.Assertions.catchThrowable(() -> read("server: 1\n"));
        assertThat(e.getMessage()).startsWith("config " + dir.resolve("agent.yaml") + " has ").contains("\n  line 1, trust: missing");
        assertThat(e.hint()).contains("docs/agent.md");
    }
}
