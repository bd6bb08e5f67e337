package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.holdfast.common.tls.CertificateFingerprint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on both ports of a real server with its self-signed certificate, against the real agent: the
 * right pin backs up and restores, the fingerprint is remembered per server, a wrong pin, an
 * unknown server, a plain-TCP client and a replaced certificate are all refused, and after each
 * refusal the earlier snapshots still restore byte-identical.
 */
class TlsTrustTest {
    private static final LogDir logs = new LogDir("TlsTrustTest");
    private static final int BLOCK = 4096;
    private static final String VOLUME = "tls-vol";
    /** A syntactically valid fingerprint that no real certificate has. */
    private static final String WRONG = "AB:".repeat(31) + "AB";

    @TempDir
    Path work;

    @Test
    void tls_pinRememberRefuse_everyRefusalLeavesSnapshotsRestorable() throws Exception {
        AgentProcess agent = new AgentProcess(logs);
        Files.deleteIfExists(agent.knownServers());
        RestoreCheck restores = new RestoreCheck(agent, work);
        Path state = work.resolve("state");
        Path first = VolumeImage.generate(1, 2 << 20).writeTo(work.resolve("first.img"));
        ServerProcess server = ServerProcess.start(work.resolve("server"), "sungem", logs);
        try {
            CertificateFingerprint fp = server.fingerprint();
            // start-up log: ports, TLS, fingerprint; never the key
            assertThat(server.log()).contains("agents (TLS) on").contains("HTTPS").contains(fp.toString())
                    .doesNotContain("PRIVATE KEY");
            assertThat(server.get("/actuator/health").statusCode()).as("health over https").isEqualTo(200);
            assertThat(plainHttpAnswers(server.httpPort())).as("plain HTTP on the HTTPS port").isFalse();

            // the right pin: backup, and the server is remembered
            String id1 = agent.backup(server, VOLUME, first, state).snapshotId();
            assertThat(Files.readString(agent.knownServers())).contains(server.ingestAddress() + " " + fp);

            // remembered: a restore with no trust option at all
            Path target = work.resolve("remembered.img");
            AgentResult remembered = agent.run("restore", "--server", server.ingestAddress(), "--volume", VOLUME,
                    "--snapshot", id1, "--target", target.toString(), "--json");
            assertThat(remembered.exitCode()).as("%s", remembered).isZero();
            assertThat(Files.mismatch(first, target)).isEqualTo(-1);

            // a wrong pin: refused (integrity, 6), both fingerprints named, nothing stored
            Path second = VolumeImage.generate(2, 2 << 20).writeTo(work.resolve("second.img"));
            AgentResult wrong = agent.run(replace(AgentProcess.backupArgs(server, VOLUME, second, state), fp.toString(), WRONG));
            assertThat(wrong.exitCode()).as("%s", wrong).isEqualTo(6);
            assertThat(wrong.stderr()).contains(WRONG).contains(fp.toString()).contains("--fingerprint").doesNotContain("Exception");
            // a daemon has no command line: the hint names its config setting too
            assertThat(wrong.stderr()).contains("trust.fingerprint in its config");
            assertThat(agent.snapshots(server, VOLUME)).hasSize(1);
            restores.assertRestores(server, VOLUME, id1, first, BLOCK);

            // an unknown server (empty known-servers file): refused, its fingerprint printed, never trusted blindly
            AgentResult unknown = agent.run("snapshots", "--server", server.ingestAddress(), "--volume", VOLUME,
                    "--known-servers", work.resolve("empty-known-servers").toString());
            assertThat(unknown.exitCode()).as("%s", unknown).isEqualTo(2);
            assertThat(unknown.stderr()).contains("not known").contains(fp.toString()).contains("--fingerprint");
            assertThat(work.resolve("empty-known-servers")).doesNotExist();

            // a plain-TCP client on the TLS port: a HELLO gets no protocol answer, the connection is closed
            byte[] answer = plainHello(server.ingestPort());
            assertThat(answer.length == 0 || answer[0] == 0x15).as("nothing but a TLS alert: %s", hex(answer)).isTrue();
            AgentResult noTls = agent.run(Stream.concat(Stream.of(AgentProcess.backupArgs(server, VOLUME, second, state))
                    .filter(a -> !a.equals("--fingerprint") && !a.equals(fp.toString())), Stream.of("--no-tls")).toArray(String[]::new));
            assertThat(noTls.exitCode()).as("%s", noTls).isNotZero();
            assertThat(agent.snapshots(server, VOLUME)).hasSize(1);
            restores.assertRestores(server, VOLUME, id1, first, BLOCK);

            // the server's certificate replaced: the remembered fingerprint no longer matches
            server.close();
            try (Stream<Path> files = Files.list(server.dataDir().resolve("tls"))) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            server.start();
            CertificateFingerprint replaced = server.fingerprint();
            assertThat(replaced).isNotEqualTo(fp);
            // the harness restarts on fresh ports and entries are per address: remember the old fingerprint
            // for the new address, as if the same server had come back with another certificate
            new org.holdfast.client.net.KnownServers(agent.knownServers())
                    .remember(org.holdfast.client.net.ServerAddress.parse(server.ingestAddress()), fp);
            AgentResult changed = agent.run("snapshots", "--server", server.ingestAddress(), "--volume", VOLUME, "--json");
            assertThat(changed.exitCode()).as("%s", changed).isEqualTo(6);
            assertThat(changed.stderr()).contains(fp.toString()).contains(replaced.toString()).contains("known-servers");

            // the operator confirms the new certificate: earlier snapshots restore, and the new pin is remembered
            restores.assertRestores(server, VOLUME, id1, first, BLOCK);
            assertThat(Files.readString(agent.knownServers())).contains(server.ingestAddress() + " " + replaced);
        } finally {
            server.close();
        }
    }

    private static String[] replace(String[] args, String from, String to) {
        return Stream.of(args).map(a -> a.equals(from) ? to : a).toArray(String[]::new);
    }

    /** Sends a protocol HELLO frame over plain TCP and returns whatever comes back until the server closes. */
    private static byte[] plainHello(int port) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
            s.setSoTimeout(20_000);
            byte[] agent = "probe".getBytes(StandardCharsets.UTF_8);
            ByteBuffer body = ByteBuffer.allocate(4 + 2 + 2 + agent.length + 2);
            body.putInt(WireProbe.MAGIC).putShort((short) 1).putShort((short) agent.length).put(agent).putShort((short) 0);
            ByteBuffer frame = ByteBuffer.allocate(6 + body.capacity());
            frame.putInt(2 + body.capacity()).put((byte) 1).put((byte) 0x01).put(body.array());
            s.getOutputStream().write(frame.array());
            s.getOutputStream().flush();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[4096];
            try {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    got.write(buf, 0, n);
                }
            } catch (SocketException reset) {
                // closed with a reset: also closed
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the TLS port kept a plain-TCP client open for 20 s; got " + hex(got.toByteArray()));
            }
            return got.toByteArray();
        }
    }

    private static boolean plainHttpAnswers(int port) {
        try {
            HttpResponse<String> r = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                    .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
                            .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 && r.body().contains("UP");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String hex(byte[] b) {
        return java.util.HexFormat.of().formatHex(b, 0, Math.min(b.length, 64));
    }
}
