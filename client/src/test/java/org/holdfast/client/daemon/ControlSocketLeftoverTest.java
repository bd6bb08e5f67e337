package org.holdfast.client.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control socket's temporary name ({@code <socket>.new}) and the socket a killed daemon leaves
 * are fixed names that only the daemon holding the state directory's lock uses: the next daemon
 * removes both before it binds.
 */
class ControlSocketLeftoverTest {
    @TempDir
    Path dir;

    @Test
    void start_socketAndTemporarySocketOfAKilledDaemon_replaced() throws Exception {
        Path socket = dir.resolve("control.sock");
        Path bound = dir.resolve("control.sock.new");
        // what SIGKILL leaves: both names bound by a process that is gone (no unlink on close for unix sockets)
        for (Path p : new Path[] {socket, bound}) {
            try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                dead.bind(UnixDomainSocketAddress.of(p));
            }
        }
        assertThat(Files.exists(bound, LinkOption.NOFOLLOW_LINKS)).isTrue();

        try (ControlServer server = new ControlServer(socket, request -> Map.of("ok", true), null,
                new DaemonLog(new PrintStream(new ByteArrayOutputStream())))) {
            assertThat(Files.exists(bound, LinkOption.NOFOLLOW_LINKS)).as("the killed daemon's temporary socket").isFalse();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-------");
            try (var c = java.nio.channels.SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                assertThat(c.isConnected()).as("the new daemon listens on the socket's name").isTrue();
            }
        }
        assertThat(socket).doesNotExist();
    }

    @Test
    void start_socketThatFitsButNotItsUsualTemporaryName_boundUnderAShortOne_tooLongRefusedSayingWhy() throws Exception {
        // a directory whose socket path is 104 bytes: "<socket>.new" would be 108, past the limit
        Path deep = dir;
        while (deep.resolve("agent.sock").toString().length() < ControlServer.MAX_SOCKET_PATH_BYTES - 2) {
            String part = "d".repeat(Math.min(40, ControlServer.MAX_SOCKET_PATH_BYTES - 2 - deep.resolve("agent.sock").toString().length()));
            deep = deep.resolve(part.isEmpty() ? "d" : part);
        }
        Files.createDirectories(deep);
        Path socket = deep.resolve("agent.sock");
        assertThat(socket.toString().length()).isBetween(ControlServer.MAX_SOCKET_PATH_BYTES - 3, ControlServer.MAX_SOCKET_PATH_BYTES);
        assertThat(ControlServer.temporaryName(socket)).isEqualTo(deep.resolve(".new"));
        try (ControlServer server = new ControlServer(socket, request -> Map.of("ok", true), null,
                new DaemonLog(new PrintStream(new ByteArrayOutputStream())))) {
            try (var c = java.nio.channels.SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                assertThat(c.isConnected()).isTrue();
            }
        }
        Path tooLong = deep.resolve("agent-control.sock");
        assertThatThrownBy(() -> new ControlServer(tooLong, request -> Map.of("ok", true), null,
                new DaemonLog(new PrintStream(new ByteArrayOutputStream()))))
                .isInstanceOf(org.holdfast.client.AgentException.class)
                .hasMessageContaining("a Unix socket path may have at most 106")
                .satisfies(e -> assertThat(((org.holdfast.client.AgentException) e).hint())
                        .as("names the setting that exists (there is no socket: setting) and the length that fits beside the socket's name")
                        .isEqualTo("give the daemon a state directory (state-dir: in its config) of at most 87 bytes"));
        assertThat(ControlServer.temporaryName(dir.resolve("control.sock"))).isEqualTo(dir.resolve("control.sock.new"));
    }
}
