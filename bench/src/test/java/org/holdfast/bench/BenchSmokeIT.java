package org.holdfast.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.bench.runner.Jars;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The quick mode end to end with real processes: the server jar, one agent process per backup and
 * restore, restic and borg when installed. Asserts correctness only (every snapshot of every
 * volume restores byte-identical, no target failed), never speed. {@code mvn verify} runs the edge
 * workload (three volumes over two days: all-zero, random and shifted content, through every
 * target); the trace and ext4 workloads run the same targets and checks with {@code -Pslow}, and
 * their generators have their own tests (TraceWorkloadTest, Ext4EditorTest).
 */
class BenchSmokeIT {
    @Test
    void quickRun_edgeWorkload_everyRestoreIsByteIdentical() throws Exception {
        quickRun("edge", 1);
    }

    @Test
    @Tag("slow")
    void quickRun_traceAndExt4Workloads_everyRestoreIsByteIdentical() throws Exception {
        quickRun("trace,ext4", 2);
    }

    /**
     * {@code --agent-mode daemon}: every backup and restore handed to a resident agent daemon per
     * volume. Slow: another server and three daemons (the edge run with {@code both} took about a
     * minute more than without, at a load average of 18). The bench itself fails a target whose run
     * the daemon's log does not show as handed off.
     */
    @Test
    @Tag("slow")
    void quickRun_edgeWorkloadInDaemonMode_everyRestoreIsByteIdenticalAndHandedOff() throws Exception {
        JsonNode r = quickRun("edge", 1, List.of("sungem"), "daemon");
        JsonNode t = r.path("workloads").get(0).path("targets").get(0);
        assertThat(t.path("name").asText()).isEqualTo("holdfast-sungem-daemon");
        assertThat(t.path("describe").path("agentMode").asText()).isEqualTo("daemon");
        assertThat(t.path("server").path("agentDaemons").asInt()).as("one daemon per volume").isEqualTo(3);
        assertThat(t.path("server").path("agentDaemonCpuSeconds").asDouble()).isPositive();
    }

    private static void quickRun(String workloads, int workloadCount) throws Exception {
        quickRun(workloads, workloadCount, List.of("sungem", "exact"), "fresh");
    }

    private static JsonNode quickRun(String workloads, int workloadCount, List<String> engines, String agentMode)
            throws Exception {
        Path root = Path.of(System.getProperty("holdfast.repo.root", "..")).toAbsolutePath().normalize();
        Path server = Jars.server(root).orElse(null);
        Path agent = Jars.agent(root).orElse(null);
        Assumptions.assumeTrue(server != null && agent != null
                        && Jars.holdsClass(server, "org.holdfast.server.app.HoldfastServer")
                        && Jars.holdsClass(agent, "org.holdfast.client.cli.HoldfastAgent"),
                "the server jar and the agent exec jar are not built yet (the reactor builds them before bench)");
        List<String> peers = new ArrayList<>();
        for (String p : List.of("restic", "borg")) {
            if (onPath(p)) {
                peers.add(p);
            }
        }
        // Under target/, not a temporary folder: after a failure the logs (agent, server, thread
        // dumps) stay for diagnosis; the images and repositories are removed by the run itself.
        Path out = Path.of(System.getProperty("holdfast.smoke.out", "target/bench-smoke")).toAbsolutePath()
                .resolve(workloads.replace(',', '-') + ("fresh".equals(agentMode) ? "" : "-" + agentMode));
        org.holdfast.bench.workload.Processes.run(List.of("rm", "-rf", out.toString()), null);
        Path json = out.resolve("results.json");

        int exit = new CommandLine(new HoldfastBench()).execute("run", "--quick", "--workload", workloads,
                "--out", out.toString(), "--json", json.toString(), "--server-jar", server.toString(),
                "--agent-jar", agent.toString(), "--peers", peers.isEmpty() ? "none" : String.join(",", peers),
                "--engines", String.join(",", engines), "--server-xmx", "512m", "--agent-xmx", "256m", "--restore", "all",
                "--agent-mode", agentMode);

        JsonNode r = new ObjectMapper().readTree(json.toFile());
        assertThat(r.path("workloads")).hasSize(workloadCount);
        for (JsonNode w : r.path("workloads")) {
            List<String> names = new ArrayList<>();
            for (JsonNode t : w.path("targets")) {
                String name = t.path("name").asText();
                names.add(name);
                assertThat(t.path("error").isNull()).as("%s on %s: %s", name, w.path("name").asText(), t.path("error"))
                        .isTrue();
                assertThat(t.path("restores").size()).as("%s on %s restored something", name, w.path("name").asText())
                        .isPositive();
                for (JsonNode rr : t.path("restores")) {
                    assertThat(rr.path("identical").asBoolean())
                            .as("%s %s %s day %d", w.path("name").asText(), name, rr.path("volume").asText(),
                                    rr.path("day").asInt())
                            .isTrue();
                    assertThat(rr.path("restoredSha256").asText()).isEqualTo(rr.path("expectedSha256").asText());
                }
                if (name.startsWith("holdfast")) {
                    int volumes = w.path("describe").has("hosts") ? w.path("describe").path("hosts").asInt()
                            : w.path("describe").has("volumes") ? w.path("describe").path("volumes").size() : 1;
                    int days = w.path("describe").path("days").asInt();
                    assertThat(t.path("snapshots").size()).isEqualTo(volumes * days);
                    assertThat(t.path("restores").size()).as("every snapshot restored").isEqualTo(volumes * days);
                }
            }
            String suffix = "fresh".equals(agentMode) ? "" : "-" + agentMode;
            assertThat(names).containsAll(engines.stream().map(e -> "holdfast-" + e + suffix).toList());
        }
        assertThat(r.path("run").path("allRestoresIdentical").asBoolean()).isTrue();
        assertThat(exit).isZero();
        return r;
    }

    private static boolean onPath(String command) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (!d.isEmpty() && java.nio.file.Files.isExecutable(Path.of(d, command))) {
                return true;
            }
        }
        return false;
    }
}
