package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import org.holdfast.client.AgentRun;
import org.holdfast.common.tls.CertificateFingerprint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent aimed at a server's HTTPS port (same certificate as its agent port): it says so with
 * or without --fingerprint, and never remembers that address in the known-servers file. An
 * unknown TLS server that is not HTTP is still refused as unknown.
 */
class HttpsPortTest {
    private static final char[] PASSWORD = "changeit".toCharArray();

    @TempDir
    static Path keys;
    private static SSLContext tls;
    private static String fingerprint;

    @TempDir
    Path dir;
    private SSLServerSocket server;
    private Thread acceptor;

    @BeforeAll
    static void certificate() throws Exception {
        Path store = keys.resolve("server.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=holdfast-test", "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", new String(PASSWORD)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0).as(out).isTrue();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(store.toFile())) {
            ks.load(in, PASSWORD);
        }
        fingerprint = CertificateFingerprint.of((X509Certificate) ks.getCertificate("server")).toString();
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD);
        tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), null, null);
    }

    /** What the fake server read from the agent, over all connections. */
    private final java.io.ByteArrayOutputStream received = new java.io.ByteArrayOutputStream();

    /** A TLS server that reads what the agent says first; {@code http}: answers it as an HTTP server does. */
    private void start(boolean http) throws IOException {
        server = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(0, 8, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    byte[] got = new byte[4096];
                    int n = s.getInputStream().read(got);
                    if (n > 0) {
                        received.write(got, 0, n);
                    }
                    if (http && n > 0) {
                        s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                    }
                } catch (IOException closedOrRefused) {
                    if (server.isClosed()) {
                        return;
                    }
                }
            }
        }, "fake-https");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        acceptor.join(5000);
    }

    private String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    @Test
    void snapshots_httpsPortWithFingerprint_network3HttpPortHint_notRemembered() throws Exception {
        start(true);
        Path known = dir.resolve("known-servers");
        AgentRun r = AgentRun.of("snapshots", "--server", address(), "--volume", "vm1", "--fingerprint", fingerprint,
                "--known-servers", known.toString());
        assertThat(r.exit()).as("%s", r).isEqualTo(3);
        assertThat(r.stderr()).contains("this is the server's HTTP port; the agent port is 7070 by default");
        assertThat(!Files.exists(known) || !Files.readString(known).contains(address()))
                .as("known-servers must not name the HTTP port").isTrue();
    }

    @Test
    void anyTlsRun_copyOfTheKnownServersFileAKilledAgentLeft_removedWithANotice() throws Exception {
        start(false);
        Path known = dir.resolve("known-servers");
        Path left = Files.write(dir.resolve("known-servers.4242.tmp"), new byte[120]); // SIGKILL during remember()
        Path other = Files.write(dir.resolve("known-servers.bak"), new byte[10]);

        AgentRun r = AgentRun.of("snapshots", "--server", address(), "--volume", "vm1", "--known-servers", known.toString());

        assertThat(left).doesNotExist();
        assertThat(other).exists();
        assertThat(r.stderr()).contains("removed " + left + " (120 B), left by an agent writing the known-servers file");
    }

    @Test
    void snapshots_httpsPortUnknown_network3HttpPortHint_notTheUnknownServerAdvice() throws Exception {
        start(true);
        Path known = dir.resolve("known-servers");
        AgentRun r = AgentRun.of("snapshots", "--server", address(), "--volume", "vm1", "--known-servers", known.toString());
        assertThat(r.exit()).as("%s", r).isEqualTo(3);
        assertThat(r.stderr()).contains("this is the server's HTTP port").doesNotContain("is not known");
        assertThat(known).doesNotExist();
    }

    @Test
    void snapshots_unknownTlsServer_withAToken_receivesOnlyTheProbeByte_neverTheToken() throws Exception {
        start(false);
        AgentRun r = AgentRun.of("snapshots", "--server", address(), "--volume", "vm1", "--token", "hft_s3cret-never-sent",
                "--known-servers", dir.resolve("known-servers").toString());
        assertThat(r.exit()).as("%s", r).isEqualTo(2);
        acceptor.join(200); // the fake has read what it will read once the agent closed
        // the handshake finished only to recognise an HTTP port: no HELLO (it carries the token) went out
        assertThat(received.toByteArray()).as("bytes an unverified server read").containsExactly(0);
    }

    @Test
    void snapshots_unknownTlsServerThatIsNotHttp_usage2UnknownWithItsFingerprint() throws Exception {
        start(false);
        AgentRun r = AgentRun.of("snapshots", "--server", address(), "--volume", "vm1",
                "--known-servers", dir.resolve("known-servers").toString());
        assertThat(r.exit()).as("%s", r).isEqualTo(2);
        assertThat(r.stderr()).contains("is not known to this agent").contains(fingerprint).doesNotContain("HTTP port");
    }
}
