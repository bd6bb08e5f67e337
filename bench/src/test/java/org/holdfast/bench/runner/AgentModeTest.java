package org.holdfast.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
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

    /**
     * The daemon binds agent.sock.new before renaming it to agent.sock: a state directory where only
     * agent.sock fits (BenchSmokeIT's daemon run under a checkout path a few bytes longer) made the
     * daemon exit with "Unix domain path too long"; such a directory must be replaced by a short one.
     */
    @Test
    void daemonSocketMustFitUnderItsTemporaryNameToo() throws Exception {
        Path base = Files.createTempDirectory("hfsock");
        try {
            String prefix = base + "/";
            Path onlyFinalFits = Path.of(prefix + "d".repeat(105 - prefix.length() - "/agent.sock".length()));
            assertEquals(105, onlyFinalFits.resolve("agent.sock").toString().length());
            assertFalse(ResidentAgent.socketFits(onlyFinalFits));
            Path bothFit = Files.createDirectories(Path.of(prefix + "e".repeat(106 - prefix.length() - "/agent.sock.new".length())));
            assertTrue(ResidentAgent.socketFits(bothFit));
            assertFalse(ResidentAgent.socketFits(Path.of(bothFit + "x")));
            // the limit is the JDK's: 106 bytes bind, 107 do not
            try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                ch.bind(UnixDomainSocketAddress.of(bothFit.resolve("agent.sock.new")));
            }
            Path tooLong = Files.createDirectories(Path.of(bothFit + "x"));
            try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                assertThrows(java.io.IOException.class, () -> ch.bind(UnixDomainSocketAddress.of(tooLong.resolve("agent.sock.new"))));
            }
        } finally {
            try (var s = Files.walk(base)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
