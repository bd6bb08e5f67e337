package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ingest port with TLS on: frames pass inside TLS, a plain-TCP client never reaches the protocol. */
class TlsIngestLoopbackTest {
    @TempDir
    Path dir;

    private ServerCertificate cert;
    private IngestHarness harness;

    @BeforeEach
    void start() {
        cert = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
        harness = new IngestHarness(dir.resolve("store"), 0, ReferenceGuard.NONE, IngestSettings.loopback().withTls(IngestTls.of(cert.privateKey(), cert.chain(), "auto")));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    @Test
    void hello_overTlsTrustingTheCertificate_answeredWithHelloOk() throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("server", cert.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), harness.port())) {
            s.setSoTimeout(10_000);
            s.startHandshake();
            s.getOutputStream().write(hello());
            s.getOutputStream().flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            int length = in.readInt();
            assertThat(length).isBetween(2, 1 << 16);
            assertThat(in.readUnsignedByte()).as("version").isEqualTo(ProtocolLimits.VERSION);
            assertThat(in.readUnsignedByte()).as("type HELLO_OK").isEqualTo(0x02);
        }
    }

    @Test
    void hello_plainTcpOnTlsPort_closedWithoutAnyFrame() throws Exception {
        byte[] answer;
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), harness.port()), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(hello());
            out.flush();
            answer = readToEnd(s.getInputStream());
        }
        // a plaintext HELLO_OK or ERROR frame would start with a length (00 00 ..); a TLS alert starts with 0x15
        assertThat(answer.length == 0 || answer[0] == 0x15).as("no protocol frame, got %d bytes", answer.length).isTrue();
        assertThat(harness.catalog().volumes()).isEmpty();
    }

    private static byte[] readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                got.write(buf, 0, n);
            }
        } catch (SocketException reset) {
            // closed with a reset
        }
        return got.toByteArray();
    }

    /** HELLO per docs/protocol.md: magic, version, agent name, empty token. */
    private static byte[] hello() {
        byte[] name = "tls-test".getBytes(StandardCharsets.UTF_8);
        byte[] token = TestTokens.DEFAULT_AGENT.getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = ByteBuffer.allocate(4 + 2 + 2 + name.length + 2 + token.length);
        body.putInt(0x48465354).putShort((short) ProtocolLimits.VERSION).putShort((short) name.length).put(name)
                .putShort((short) token.length).put(token);
        ByteBuffer frame = ByteBuffer.allocate(6 + body.capacity());
        frame.putInt(2 + body.capacity()).put((byte) ProtocolLimits.VERSION).put((byte) 0x01).put(body.array());
        return frame.array();
    }
}
