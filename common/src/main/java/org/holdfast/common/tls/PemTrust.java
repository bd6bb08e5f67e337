package org.holdfast.common.tls;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * What the TLS clients of Holdfast (the agent, a worker) share to check a server: the JDK's PKIX
 * trust manager over the CA certificates of a PEM file, and {@link ServerCheck}, the base of a
 * trust manager that only ever checks servers.
 */
public final class PemTrust {
    private PemTrust() {
    }

    /**
     * The JDK's trust manager for the CA certificate(s) in {@code pemFile}.
     *
     * @throws IOException if the file cannot be read
     * @throws CertificateException if it holds no certificate or is not PEM
     * @throws GeneralSecurityException if the JDK cannot build a trust manager
     */
    public static X509ExtendedTrustManager caCertificates(Path pemFile) throws IOException, GeneralSecurityException {
        Collection<? extends Certificate> certs;
        try (InputStream in = Files.newInputStream(pemFile)) {
            certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        }
        if (certs.isEmpty()) {
            throw new CertificateException(pemFile + " holds no certificate");
        }
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        int i = 0;
        for (Certificate c : certs) {
            ks.setCertificateEntry("ca-" + i++, c);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        for (TrustManager tm : tmf.getTrustManagers()) {
            if (tm instanceof X509ExtendedTrustManager x) {
                return x;
            }
        }
        throw new IllegalStateException("the JDK offers no X509ExtendedTrustManager");
    }

    /** A client's trust manager: every server check goes to {@link #checkServer}; client certificates are always refused. */
    public abstract static class ServerCheck extends X509ExtendedTrustManager {
        /** Checks {@code chain} with a CA trust manager (PKIX, and the host name where the engine asks for it). */
        protected static void checkWithCa(X509ExtendedTrustManager ca, X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            if (engine != null) {
                ca.checkServerTrusted(chain, authType, engine);
            } else {
                ca.checkServerTrusted(chain, authType);
            }
        }

        /** Checks the server's {@code chain}; {@code engine} is null when the JDK does not say. */
        protected abstract void checkServer(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException;

        @Override
        public final void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            checkServer(chain, authType, engine);
        }

        @Override
        public final void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            checkServer(chain, authType, null);
        }

        @Override
        public final void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            checkServer(chain, authType, null);
        }

        @Override
        public final void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            throw new CertificateException("a TLS client accepts no client certificates");
        }

        @Override
        public final void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            throw new CertificateException("a TLS client accepts no client certificates");
        }

        @Override
        public final void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("a TLS client accepts no client certificates");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
