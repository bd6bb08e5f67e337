package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.holdfast.client.net.ServerAddress;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.net.ServerTrust;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.TlsEngines;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The agent port's TLS engines: auto picks OpenSSL where it loads, every server/agent engine pair
 * talks, and only AES-GCM can be negotiated.
 */
class TlsEngineTest {
    @TempDir
    Path dir;

    private ServerCertificate cert;
    private IngestHarness harness;

    @BeforeEach
    void certificate() {
        cert = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
    }

    @AfterEach
    void stop() {
        System.clearProperty(ServerTrust.ENGINE_PROPERTY);
        if (harness != null) {
            harness.close();
        }
    }

    private void start(String engine) {
        harness = new IngestHarness(dir.resolve("store"), 0, ReferenceGuard.NONE,
                IngestSettings.loopback().withTls(IngestTls.of(cert.privateKey(), cert.chain(), engine)));
    }

    @Test
    void of_autoOnLinuxX8664_usesOpenSsl() {
        Assumptions.assumeTrue(System.getProperty("os.name").startsWith("Linux") && System.getProperty("os.arch").matches("amd64|x86_64"),
                "netty-tcnative is shipped for Linux x86-64 only");
        IngestTls tls = IngestTls.of(cert.privateKey(), cert.chain(), "auto");
        assertThat(tls.engine()).isEqualTo(TlsEngines.Engine.OPENSSL);
        assertThat(tls.describe()).startsWith("OpenSSL engine (BoringSSL");
    }

    @Test
    void of_jdk_usesTheJdkEngine() {
        assertThat(IngestTls.of(cert.privateKey(), cert.chain(), "jdk").engine()).isEqualTo(TlsEngines.Engine.JDK);
        assertThatThrownBy(() -> IngestTls.of(cert.privateKey(), cert.chain(), "fastest")).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({"openssl, openssl", "openssl, jdk", "jdk, openssl", "jdk, jdk"})
    void hello_everyEnginePair_answeredOverTls(String serverEngine, String agentEngine) {
        Assumptions.assumeTrue(TlsEngines.openSslAvailable(), "OpenSSL does not load here");
        start(serverEngine);
        System.setProperty(ServerTrust.ENGINE_PROPERTY, agentEngine);
        try (ServerConnection c = ServerConnection.connect(new ServerAddress("127.0.0.1", harness.port()), Duration.ofSeconds(10),
                ServerTrust.pinned(cert.fingerprint()))) {
            assertThat(c.tlsEngine()).isEqualTo(TlsEngines.choose(agentEngine));
            assertThat(c.tlsCipher()).as("the agent never settles for ChaCha20 or CBC").matches("TLSv1\\.3 TLS_AES_(128|256)_GCM_SHA(256|384)");
            HelloOk ok = c.hello("engine-test", TestTokens.DEFAULT_AGENT, Duration.ofSeconds(10));
            assertThat(ok.serverVersion()).isEqualTo("test");
            assertThat(c.serverFingerprint()).isEqualTo(cert.fingerprint());
        }
    }

    @ParameterizedTest
    @CsvSource({"openssl", "jdk"})
    void handshake_jdkClientOfferingEverything_getsTls13AesGcm(String serverEngine) throws Exception {
        Assumptions.assumeTrue(serverEngine.equals("jdk") || TlsEngines.openSslAvailable(), "OpenSSL does not load here");
        start(serverEngine);
        try (SSLSocket s = socket(null)) {
            s.startHandshake();
            assertThat(s.getSession().getProtocol()).isEqualTo("TLSv1.3");
            assertThat(s.getSession().getCipherSuite()).matches("TLS_AES_(128|256)_GCM_SHA(256|384)");
        }
    }

    @ParameterizedTest
    @CsvSource({"openssl", "jdk"})
    void handshake_tls12ClientOfferingOnlyChaChaOrCbc_refused(String serverEngine) throws Exception {
        Assumptions.assumeTrue(serverEngine.equals("jdk") || TlsEngines.openSslAvailable(), "OpenSSL does not load here");
        start(serverEngine);
        try (SSLSocket s = socket(new String[] {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"})) {
            s.setEnabledProtocols(new String[] {"TLSv1.2"});
            assertThatThrownBy(s::startHandshake).isInstanceOf(SSLHandshakeException.class);
        }
    }

    @Test
    void handshake_jdkServerAndClientOfferingOnlyChaCha_refused() throws Exception {
        // BoringSSL's TLS 1.3 suites are fixed (it would agree to ChaCha20 with such a client); our
        // agents on either engine list AES-GCM first and get it (hello_everyEnginePair_answeredOverTls)
        start("jdk");
        try (SSLSocket s = socket(new String[] {"TLS_CHACHA20_POLY1305_SHA256"})) {
            assertThatThrownBy(s::startHandshake).isInstanceOf(SSLHandshakeException.class);
        }
    }

    private SSLSocket socket(String[] suites) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("server", cert.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), harness.port());
        s.setSoTimeout(10_000);
        if (suites != null) {
            s.setEnabledCipherSuites(suites);
        }
        return s;
    }
}
