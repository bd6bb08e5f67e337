package org.holdfast.server.security.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.net.ssl.SSLEngine;
import org.holdfast.common.tls.CertificateFingerprint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerCertificateLoaderTest {
    @TempDir
    Path dir;

    @Test
    void load_noCertificateConfigured_makesSelfSignedPairWithPrivateKeyFile() throws Exception {
        Path tls = dir.resolve("tls");
        ServerCertificate c = ServerCertificateLoader.load(TlsSettings.selfSigned(tls));

        assertThat(c.selfSigned()).isTrue();
        assertThat(Files.exists(tls.resolve("server.crt"))).isTrue();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tls.resolve("server.key")))).isEqualTo("rw-------");
        X509Certificate x = c.certificate();
        assertThat(x.getPublicKey().getAlgorithm()).isEqualTo("EC");
        assertThat(x.getSubjectAlternativeNames().stream().map(l -> String.valueOf(l.get(1))).toList()).contains("localhost", "127.0.0.1");
        assertThat(x.getNotAfter().toInstant()).isAfter(Instant.now().plus(Duration.ofDays(3600)));
        assertThat(c.fingerprint()).isEqualTo(CertificateFingerprint.of(x));
        assertThat(c.fingerprint().toString()).matches("([0-9A-F]{2}:){31}[0-9A-F]{2}");
        assertThat(c.toString()).doesNotContain("PRIVATE");
    }

    @Test
    void load_secondStart_reusesTheSameCertificate() {
        Path tls = dir.resolve("tls");
        CertificateFingerprint first = ServerCertificateLoader.load(TlsSettings.selfSigned(tls)).fingerprint();
        CertificateFingerprint second = ServerCertificateLoader.load(TlsSettings.selfSigned(tls)).fingerprint();
        assertThat(second).isEqualTo(first);
    }

    @Test
    void load_selfSignedKeyDeleted_refusesNamingBothFiles() throws Exception {
        Path tls = dir.resolve("tls");
        ServerCertificateLoader.load(TlsSettings.selfSigned(tls));
        Files.delete(tls.resolve("server.key"));
        assertThatThrownBy(() -> ServerCertificateLoader.load(TlsSettings.selfSigned(tls))).isInstanceOf(TlsSetupException.class)
                .hasMessageContaining("server.key").hasMessageContaining("delete").hasMessageContaining("server.crt");
        assertThat(Files.exists(tls.resolve("server.crt"))).as("nothing replaced").isTrue();
    }

    @Test
    void load_operatorPemPair_usedAsGiven() {
        Path made = dir.resolve("made");
        ServerCertificate original = ServerCertificateLoader.load(TlsSettings.selfSigned(made));
        ServerCertificate loaded = ServerCertificateLoader.load(pem(made.resolve("server.crt"), made.resolve("server.key")));
        assertThat(loaded.fingerprint()).isEqualTo(original.fingerprint());
        assertThat(loaded.selfSigned()).isFalse();
        assertThat(loaded.origin()).contains("server.crt");
        assertThat(Files.exists(dir.resolve("unused"))).as("no self-signed pair made").isFalse();
    }

    @Test
    void load_keyOfAnotherCertificate_refusedAsMismatch() {
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        ServerCertificateLoader.load(TlsSettings.selfSigned(a));
        ServerCertificateLoader.load(TlsSettings.selfSigned(b));
        assertThatThrownBy(() -> ServerCertificateLoader.load(pem(a.resolve("server.crt"), b.resolve("server.key"))))
                .isInstanceOf(TlsSetupException.class).hasMessageContaining("does not belong to the certificate");
    }

    @Test
    void load_missingOrSwappedOrGarbageFiles_clearErrors() throws Exception {
        Path a = dir.resolve("a");
        ServerCertificateLoader.load(TlsSettings.selfSigned(a));
        Path garbage = Files.writeString(dir.resolve("garbage.pem"), "hello\n");
        assertThatThrownBy(() -> ServerCertificateLoader.load(pem(dir.resolve("nope.crt"), a.resolve("server.key"))))
                .isInstanceOf(TlsSetupException.class).hasMessageContaining("nope.crt").hasMessageContaining("does not exist");
        assertThatThrownBy(() -> ServerCertificateLoader.load(pem(a.resolve("server.crt"), a.resolve("server.crt"))))
                .isInstanceOf(TlsSetupException.class).hasMessageContaining("swapped");
        assertThatThrownBy(() -> ServerCertificateLoader.load(pem(garbage, a.resolve("server.key"))))
                .isInstanceOf(TlsSetupException.class).hasMessageContaining("garbage.pem");
        assertThatThrownBy(() -> ServerCertificateLoader.load(pem(a.resolve("server.crt"), garbage)))
                .isInstanceOf(TlsSetupException.class).hasMessageContaining("no PEM private key");
        assertThatThrownBy(() -> ServerCertificateLoader.load(new TlsSettings(a.resolve("server.crt"), null, null, null,
                dir.resolve("unused"), List.of()))).isInstanceOf(TlsSetupException.class).hasMessageContaining("private-key");
    }

    @Test
    void load_pkcs12WithPassword_loadedAndWrongPasswordRefused() throws Exception {
        ServerCertificate made = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("a")));
        Path p12 = dir.resolve("server.p12");
        KeyStore ks = made.keyStore("s3cret".toCharArray());
        try (OutputStream out = Files.newOutputStream(p12)) {
            ks.store(out, "s3cret".toCharArray());
        }
        ServerCertificate loaded = ServerCertificateLoader.load(keystore(p12, "s3cret"));
        assertThat(loaded.fingerprint()).isEqualTo(made.fingerprint());
        assertThat(loaded.origin()).contains("PKCS#12");

        assertThatThrownBy(() -> ServerCertificateLoader.load(keystore(p12, "not-it-42"))).isInstanceOf(TlsSetupException.class)
                .hasMessageContaining("server.p12").hasMessageContaining("password").hasMessageNotContaining("not-it-42");
        assertThatThrownBy(() -> ServerCertificateLoader.load(keystore(dir.resolve("a/server.crt"), "s3cret")))
                .isInstanceOf(TlsSetupException.class).hasMessageContaining("PKCS#12");
    }

    @Test
    void sslContext_madeCertificate_servesAnEngine() {
        ServerCertificate c = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
        SSLEngine e = c.sslContext().createSSLEngine();
        e.setUseClientMode(false);
        assertThat(e.getSupportedProtocols()).contains("TLSv1.3");
    }

    private TlsSettings pem(Path cert, Path key) {
        return new TlsSettings(cert, key, null, null, dir.resolve("unused"), List.of());
    }

    private TlsSettings keystore(Path file, String password) {
        return new TlsSettings(null, null, file, password, dir.resolve("unused"), List.of());
    }
}
