package org.holdfast.server.security.tls;

import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.holdfast.common.tls.CertificateFingerprint;

/**
 * The server's TLS identity: its private key and certificate chain (leaf first), where they came
 * from, and the leaf's SHA-256 fingerprint that agents pin. {@link #of} checks that the key belongs
 * to the certificate, so a mismatched pair fails at start, not at the first handshake.
 */
public final class ServerCertificate {
    /** Alias of the key entry in {@link #keyStore}. */
    public static final String ALIAS = "holdfast";

    private final PrivateKey key;
    private final List<X509Certificate> chain;
    private final String origin;
    private final boolean selfSigned;
    private final CertificateFingerprint fingerprint;

    private ServerCertificate(PrivateKey key, List<X509Certificate> chain, String origin, boolean selfSigned) {
        this.key = key;
        this.chain = List.copyOf(chain);
        this.origin = origin;
        this.selfSigned = selfSigned;
        this.fingerprint = CertificateFingerprint.of(chain.get(0));
    }

    /**
     * The pair {@code key}, {@code chain}; {@code origin} names the files for messages and the log.
     *
     * @throws TlsSetupException if the chain is empty or the key does not belong to its first certificate
     */
    public static ServerCertificate of(PrivateKey key, List<X509Certificate> chain, String origin, boolean selfSigned) {
        if (chain == null || chain.isEmpty()) {
            throw new TlsSetupException(origin + " holds no certificate; supply the server certificate (PEM or PKCS#12)");
        }
        if (!belongsTo(key, chain.get(0))) {
            throw new TlsSetupException("the private key does not belong to the certificate (" + origin + "): the certificate's"
                    + " public key does not verify what the key signs; supply the key that was used to request this certificate");
        }
        return new ServerCertificate(key, chain, origin, selfSigned);
    }

    /** Signs a nonce with {@code key} and verifies it with the certificate's public key. */
    private static boolean belongsTo(PrivateKey key, X509Certificate cert) {
        String alg = switch (key.getAlgorithm()) {
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            case "DSA" -> "SHA256withDSA";
            default -> key.getAlgorithm(); // Ed25519, Ed448 name their own signature
        };
        if (!key.getAlgorithm().equalsIgnoreCase(cert.getPublicKey().getAlgorithm())
                && !("EC".equals(cert.getPublicKey().getAlgorithm()) && "ECDSA".equals(key.getAlgorithm()))) {
            return false;
        }
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        try {
            Signature s = Signature.getInstance(alg);
            s.initSign(key);
            s.update(nonce);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance(alg);
            v.initVerify(cert.getPublicKey());
            v.update(nonce);
            return v.verify(sig);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** For writing the self-signed pair and for the agent port's TLS engine (a Netty context); never logged. */
    public PrivateKey privateKey() {
        return key;
    }

    /** The server's own certificate (the chain's first). */
    public X509Certificate certificate() {
        return chain.get(0);
    }

    /** Leaf first, as sent in the handshake. */
    public List<X509Certificate> chain() {
        return chain;
    }

    /** The leaf certificate's SHA-256 fingerprint. */
    public CertificateFingerprint fingerprint() {
        return fingerprint;
    }

    /** Where the certificate was read from, e.g. {@code self-signed, /data/tls/server.crt}. */
    public String origin() {
        return origin;
    }

    /** True for the certificate this server made for itself. */
    public boolean selfSigned() {
        return selfSigned;
    }

    public Instant notAfter() {
        return certificate().getNotAfter().toInstant();
    }

    /** An in-memory PKCS#12 keystore holding the key and chain under {@link #ALIAS}, protected by {@code password}. */
    public KeyStore keyStore(char[] password) {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry(ALIAS, key, password, chain.toArray(X509Certificate[]::new));
            return ks;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new TlsSetupException("cannot put the server key into a keystore (" + origin + "): " + e.getMessage(), e);
        }
    }

    /** A server-side TLS context (TLS 1.2 and 1.3) presenting this certificate; the same for both ports. */
    public SSLContext sslContext() {
        char[] password = "in-memory".toCharArray(); // protects nothing: the keystore never leaves this method
        try {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keyStore(password), password);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new TlsSetupException("cannot build a TLS context from " + origin + ": " + e.getMessage(), e);
        }
    }

    /** Never the key. */
    @Override
    public String toString() {
        return "ServerCertificate[" + certificate().getSubjectX500Principal().getName() + ", SHA-256 " + fingerprint + ", " + origin + "]";
    }
}
