package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import org.holdfast.common.tls.CertificateFingerprint;
import org.holdfast.common.tls.PemTrust;

/**
 * How a worker decides it talks to its master, like an agent does (docs/agent.md, "Verifying the
 * server"): the certificate's SHA-256 fingerprint is the pinned one
 * ({@code holdfast.cluster.master-fingerprint}; no CA, no host name check), or it chains to a CA
 * in a PEM file ({@code holdfast.cluster.master-ca-certificate}). The last refusal is kept so that
 * the worker can log why, naming both fingerprints.
 */
public final class MasterTrust extends PemTrust.ServerCheck {
    private final CertificateFingerprint pinned;
    private final X509ExtendedTrustManager ca;
    private final String source;
    private volatile String refusal;

    private MasterTrust(CertificateFingerprint pinned, X509ExtendedTrustManager ca, String source) {
        this.pinned = pinned;
        this.ca = ca;
        this.source = source;
    }

    /** Trusts exactly the certificate with this fingerprint. */
    public static MasterTrust pinned(CertificateFingerprint fingerprint) {
        return new MasterTrust(fingerprint, null, "holdfast.cluster.master-fingerprint");
    }

    /** Trusts certificates issued by a CA in {@code pemFile}. */
    public static MasterTrust caCertificates(Path pemFile) {
        try {
            return new MasterTrust(null, PemTrust.caCertificates(pemFile), "holdfast.cluster.master-ca-certificate " + pemFile);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use holdfast.cluster.master-ca-certificate " + pemFile + ": " + e.getMessage()
                    + "; name a readable PEM file holding the CA certificate(s)", e);
        }
    }

    /** Why the last handshake's certificate was refused, or null; cleared by {@link #clearRefusal}. */
    public String refusal() {
        return refusal;
    }

    void clearRefusal() {
        refusal = null;
    }

    /** True for CA mode, where the host name is checked too. */
    boolean checksHostName() {
        return ca != null;
    }

    @Override
    protected void checkServer(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        if (chain == null || chain.length == 0) {
            throw refuse("the master presented no certificate");
        }
        CertificateFingerprint got = CertificateFingerprint.of(chain[0]);
        if (pinned != null) {
            if (!got.equals(pinned)) {
                throw refuse("the master presented a certificate with SHA-256 fingerprint " + got + ", but " + source + " is "
                        + pinned + "; refusing to connect. Compare both with the fingerprint the master logs at start; if its"
                        + " certificate was replaced on purpose, set the new one, otherwise the connection may be intercepted");
            }
            return;
        }
        try {
            checkWithCa(ca, chain, authType, engine);
        } catch (CertificateException e) {
            throw refuse("the master's certificate (SHA-256 " + got + ") is not trusted by " + source + ": " + e.getMessage()
                    + "; check the CA file and that holdfast.cluster.master uses a host name the certificate names");
        }
    }

    private CertificateException refuse(String why) {
        refusal = why;
        return new CertificateException(why);
    }
}
