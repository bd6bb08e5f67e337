package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.holdfast.client.AgentRun;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The agent aimed at a plain HTTP server (the web port of a server with TLS off) says so, exit 3. */
class WrongPortTest {
    private ServerSocket http;
    private Thread acceptor;

    @BeforeEach
    void start() throws IOException {
        http = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!http.isClosed()) {
                try (Socket s = http.accept()) {
                    s.getInputStream().read(new byte[4096]); // whatever the agent says first: HELLO or a ClientHello
                    s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                } catch (IOException closed) {
                    return;
                }
            }
        }, "fake-http");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stop() throws Exception {
        http.close();
        acceptor.join(5000);
    }

    private String address() {
        return "127.0.0.1:" + http.getLocalPort();
    }

    @Test
    void snapshots_plainTcpAtHttpPort_network3NamesAgentPort() {
        AgentRun r = AgentRun.of("snapshots", "--server", address(), "--no-tls", "--volume", "vm1");
        assertThat(r.exit()).as("%s", r).isEqualTo(3);
        assertThat(r.stderr()).contains("this is the server's HTTP port; the agent port is 7070 by default")
                .contains("--server 127.0.0.1:7070").doesNotContain("malformed").doesNotContain("HELLO");
    }

    @Test
    void snapshots_tlsAtPlainHttpPort_network3NamesAgentPortNotAHandshakeError() {
        AgentRun r = AgentRun.of("snapshots", "--server", address(), "--volume", "vm1", "--fingerprint", "AB:".repeat(31) + "AB");
        assertThat(r.exit()).as("%s", r).isEqualTo(3);
        assertThat(r.stderr()).contains("this is the server's HTTP port").doesNotContain("handshake");
    }
}
