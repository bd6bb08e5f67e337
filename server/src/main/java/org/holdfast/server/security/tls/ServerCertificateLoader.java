package org.holdfast.server.security.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.UnrecoverableKeyException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Finds the server's certificate: the operator's PKCS#12 keystore, or their PEM certificate and
 * key, or else the self-signed pair in {@code <data-dir>/tls} ({@value #CERT_FILE}, {@value #KEY_FILE}),
 * made on the first start and reused on every later one so that pinned agents keep trusting it.
 *
 * <p>The self-signed pair is written key first, then certificate: a certificate file means the pair
 * is complete. A certificate without its key is an error (making a new pair silently would change
 * the fingerprint every agent pinned); a key without a certificate is a start that crashed
 * half-way, and is replaced.
 */
public final class ServerCertificateLoader {
    private static final System.Logger LOG = System.getLogger(ServerCertificateLoader.class.getName());
    public static final String CERT_FILE = "server.crt";
    public static final String KEY_FILE = "server.key";

    private ServerCertificateLoader() {
    }

    /** Loads (or, for the self-signed default, makes) the certificate {@code settings} describe. */
    public static ServerCertificate load(TlsSettings settings) {
        if (settings.keystore() != null) {
            if (settings.certificate() != null || settings.privateKey() != null) {
                throw new TlsSetupException("both holdfast.tls.keystore and holdfast.tls.certificate/private-key are set;"
                        + " set either the PKCS#12 keystore or the PEM pair, not both");
            }
            return fromKeystore(settings.keystore(), settings.keystorePassword());
        }
        if (settings.certificate() != null || settings.privateKey() != null) {
            if (settings.certificate() == null || settings.privateKey() == null) {
                throw new TlsSetupException("holdfast.tls." + (settings.certificate() == null ? "certificate" : "private-key")
                        + " is missing: a PEM certificate needs both holdfast.tls.certificate and holdfast.tls.private-key"
                        + " (or use a PKCS#12 holdfast.tls.keystore)");
            }
            return fromPem(settings.certificate(), settings.privateKey(),
                    "PEM " + settings.certificate() + " + " + settings.privateKey(), false);
        }
        return selfSigned(settings.selfSignedDir(), settings.hostNames());
    }

    /** The operator's PEM certificate chain (leaf first) and its key. */
    public static ServerCertificate fromPem(Path certificate, Path privateKey, String origin, boolean selfSigned) {
        List<X509Certificate> chain = PemFiles.readCertificates(certificate, "certificate file");
        PrivateKey key = PemFiles.readPrivateKey(privateKey, "private key file");
        return ServerCertificate.of(key, chain, origin, selfSigned);
    }

    /** The first key entry of a PKCS#12 file, whose key has the store's password. */
    public static ServerCertificate fromKeystore(Path file, String password) {
        char[] pw = password == null ? new char[0] : password.toCharArray();
        KeyStore ks;
        try (InputStream in = Files.newInputStream(file)) {
            ks = KeyStore.getInstance("PKCS12");
            ks.load(in, pw);
        } catch (IOException e) {
            if (e instanceof java.nio.file.NoSuchFileException || e instanceof java.nio.file.AccessDeniedException) {
                throw PemFiles.unreadable(file, "keystore", e);
            }
            if (e.getCause() instanceof UnrecoverableKeyException) {
                throw new TlsSetupException("keystore " + file + ": wrong password; set holdfast.tls.keystore-password"
                        + " (for example from the environment variable HOLDFAST_TLS_KEYSTOREPASSWORD)", e);
            }
            throw new TlsSetupException("keystore " + file + " is not a PKCS#12 file or its password is wrong (" + e.getMessage()
                    + "); convert it with 'openssl pkcs12 -export' or check holdfast.tls.keystore-password", e);
        } catch (GeneralSecurityException e) {
            throw new TlsSetupException("keystore " + file + " cannot be read: " + e.getMessage(), e);
        }
        try {
            for (String alias : Collections.list(ks.aliases())) {
                if (!ks.isKeyEntry(alias)) {
                    continue;
                }
                Key key;
                try {
                    key = ks.getKey(alias, pw);
                } catch (UnrecoverableKeyException e) {
                    throw new TlsSetupException("keystore " + file + ": the key '" + alias + "' has a password other than the"
                            + " keystore's; re-export it with one password for both", e);
                }
                if (!(key instanceof PrivateKey pk)) {
                    continue;
                }
                List<X509Certificate> chain = new ArrayList<>();
                Certificate[] certs = ks.getCertificateChain(alias);
                for (Certificate c : certs == null ? new Certificate[0] : certs) {
                    chain.add((X509Certificate) c);
                }
                return ServerCertificate.of(pk, chain, "PKCS#12 " + file + " (entry '" + alias + "')", false);
            }
        } catch (GeneralSecurityException e) {
            throw new TlsSetupException("keystore " + file + " cannot be read: " + e.getMessage(), e);
        }
        throw new TlsSetupException("keystore " + file + " holds no private key with a certificate; export the server's key"
                + " and certificate chain into it (openssl pkcs12 -export -inkey KEY -in CHAIN)");
    }

    /** The pair in {@code dir}, made now if there is none. */
    public static ServerCertificate selfSigned(Path dir, List<String> hostNames) {
        Path cert = dir.resolve(CERT_FILE);
        Path key = dir.resolve(KEY_FILE);
        String origin = "self-signed, " + cert;
        if (Files.exists(cert)) {
            if (!Files.exists(key)) {
                throw new TlsSetupException("self-signed certificate " + cert + " exists but its key " + key + " is missing;"
                        + " restore the key from a backup, or delete " + cert + " to make a new certificate at the next start"
                        + " (every agent must then be given the new fingerprint)");
            }
            return fromPem(cert, key, origin, true);
        }
        ServerCertificate made = SelfSignedCertificate.make(hostNames, origin);
        try {
            Files.createDirectories(dir);
            PemFiles.writePrivateKey(key, made.privateKey());
            PemFiles.writeCertificates(cert, made.chain());
        } catch (IOException e) {
            throw new TlsSetupException("cannot write the self-signed certificate to " + dir + ": " + e
                    + "; make the data directory writable, or supply a certificate with holdfast.tls.certificate", e);
        }
        LOG.log(System.Logger.Level.INFO, "made a self-signed certificate {0}, SHA-256 {1}", cert, made.fingerprint());
        return made;
    }
}
