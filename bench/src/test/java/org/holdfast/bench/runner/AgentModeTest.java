package org.holdfast.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentModeTest {
    @Test
    void parsesTheThreeValuesFreshFirst() {
        assertEquals(List.of(AgentMode.FRESH), AgentMode.parse("fresh"));
        assertEquals(List.of(AgentMode.DAEMON), AgentMode.parse(" Daemon "));
        assertEquals(List.of(AgentMode.FRESH, AgentMode.DAEMON), AgentMode.parse("both"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AgentMode.parse("warm"));
        assertTrue(e.getMessage().contains("fresh, daemon or both"), e.getMessage());
    }

    @Test
    void daemonTargetsAreNamedAfterTheirModeAndSayItInTheirDescription() {
        Path jar = Path.of("x.jar");
        HoldfastTarget fresh = new HoldfastTarget(jar, jar, "sungem", "1g", "512m",
                new HoldfastTarget.ServerOptions(true, 0, List.of(), true), AgentMode.FRESH);
        HoldfastTarget daemon = new HoldfastTarget(jar, jar, "sungem", "1g", "512m",
                new HoldfastTarget.ServerOptions(true, 0, List.of(), false), AgentMode.DAEMON);
        assertEquals("holdfast-sungem", fresh.name());
        assertEquals("holdfast-sungem-tls-off-daemon", daemon.name());
        assertEquals("fresh", fresh.describe().get("agentMode"));
        assertEquals("daemon", daemon.describe().get("agentMode"));
    }

    @Test
    void daemonConfigTrustsTheServerAndHasOnlyAnIdleVolume() {
        Path state = Path.of("/tmp/bench/daemon-host-01");
        String tls = ResidentAgent.config("127.0.0.1:7070", List.of("--fingerprint", "AB:CD"), state);
        assertTrue(tls.contains("server: 127.0.0.1:7070\n"), tls);
        assertTrue(tls.contains("  fingerprint: \"AB:CD\"\n"), tls);
        assertTrue(tls.contains("state-dir: /tmp/bench/daemon-host-01\n"), tls);
        assertTrue(tls.contains("schedule: \"" + ResidentAgent.IDLE_SCHEDULE + "\""), tls);
        String plain = ResidentAgent.config("127.0.0.1:7070", List.of("--no-tls"), state);
        assertTrue(plain.contains("  no-tls: true\n"), plain);
        assertThrows(IllegalArgumentException.class, () -> ResidentAgent.config("h:1", List.of(), state));
    }
}
