package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.ServerSocket;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

class PortPreflightTest {

    private static StandardEnvironment env(Object... pairs) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], pairs[i + 1]);
        }
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addFirst(new MapPropertySource("test", m));
        return env;
    }

    @Test
    void check_twoTakenPorts_bothNamedInOneRefusal() throws Exception {
        try (ServerSocket api = new ServerSocket(0); ServerSocket agents = new ServerSocket(0)) {
            PortsTakenException e = catchThrowableOfType(() -> PortPreflight.check(PortPreflight.listens(env(
                    "server.port", api.getLocalPort(), "holdfast.ingest.port", agents.getLocalPort()))), PortsTakenException.class);
            assertThat(e).isNotNull();
            assertThat(e.problems()).hasSize(2);
            assertThat(e.problems().get(0)).startsWith("server.port=" + api.getLocalPort() + " (the REST API and the console)");
            assertThat(e.problems().get(1)).startsWith("holdfast.ingest.port=" + agents.getLocalPort() + " (agents) on 0.0.0.0:");
        }
    }

    @Test
    void check_freePortsOrAnyPort_passesAndLeavesThemFree() throws Exception {
        int free;
        try (ServerSocket s = new ServerSocket(0)) {
            free = s.getLocalPort();
        }
        StandardEnvironment env = env("server.port", 0, "holdfast.ingest.port", free);
        assertThat(PortPreflight.listens(env)).extracting(PortPreflight.Listen::port).containsExactly(free);
        assertThatCode(() -> PortPreflight.check(PortPreflight.listens(env))).doesNotThrowAnyException();
        try (ServerSocket again = new ServerSocket(free)) { // the check gave it back
            assertThat(again.getLocalPort()).isEqualTo(free);
        }
    }

    @Test
    void check_onePortForTwoServers_refused() {
        PortsTakenException e = catchThrowableOfType(() -> PortPreflight.check(PortPreflight.listens(env(
                "server.port", 45871, "holdfast.ingest.port", 45871))), PortsTakenException.class);
        assertThat(e.problems()).anySatisfy(p -> assertThat(p).isEqualTo(
                "holdfast.ingest.port and server.port are both 45871: give agents a port of their own"));
    }

    @Test
    void check_onePortOnTwoDistinctAddresses_passes_onAllAddressesBesideOne_refused() throws Exception {
        int free;
        try (ServerSocket s = new ServerSocket(0)) {
            free = s.getLocalPort();
        }
        int port = free;
        // 127.0.0.1 and 127.0.0.2 are both loopback on Linux: the same port binds on each
        assertThatCode(() -> PortPreflight.check(PortPreflight.listens(env("server.address", "127.0.0.1", "server.port", port,
                "holdfast.ingest.host", "127.0.0.2", "holdfast.ingest.port", port)))).doesNotThrowAnyException();
        PortsTakenException e = catchThrowableOfType(() -> PortPreflight.check(PortPreflight.listens(env(
                "server.address", "127.0.0.1", "server.port", port, "holdfast.ingest.port", port))), PortsTakenException.class);
        assertThat(e).as("all addresses (the agents' default) overlaps 127.0.0.1").isNotNull();
        assertThat(e.problems()).containsExactly("holdfast.ingest.port and server.port are both " + port
                + ": give agents a port of their own");
    }

    @Test
    void listens_byRole_masterAddsWorkersPort_workerHasNoAgentPort() {
        assertThat(PortPreflight.listens(env("holdfast.cluster.role", "master", "holdfast.cluster.port", 17071)))
                .extracting(PortPreflight.Listen::setting).containsExactly("server.port", "holdfast.ingest.port", "holdfast.cluster.port");
        StandardEnvironment worker = new StandardEnvironment();
        worker.getPropertySources().addFirst(new SystemEnvironmentPropertySource("vars", Map.of("HOLDFAST_CLUSTER_ROLE", "worker")));
        assertThat(PortPreflight.listens(worker)).as("the role from an environment variable")
                .extracting(PortPreflight.Listen::setting).containsExactly("server.port");
        assertThat(PortPreflight.listens(env("server.port", -1, "holdfast.ingest.port", "tcp://10.0.0.1:7070")))
                .as("HTTP off, and a port that is no number (left to its own check)").isEmpty();
    }
}
