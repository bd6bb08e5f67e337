package org.holdfast.server.security.tls;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;

/** Reads and writes PEM certificate chains and private keys (PKCS#8, PKCS#1 RSA and SEC1 EC keys are read). */
final class PemFiles {
    private PemFiles() {
    }

    /** Every certificate in {@code file}, in file order (leaf first, as servers and openssl write chains). */
    static List<X509Certificate> readCertificates(Path file, String role) {
        try (InputStream in = Files.newInputStream(file)) {
            List<X509Certificate> chain = new ArrayList<>();
            for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                chain.add((X509Certificate) c);
            }
            if (chain.isEmpty()) {
                throw new TlsSetupException(role + " " + file + " holds no PEM certificate; it must contain '-----BEGIN CERTIFICATE-----'");
            }
            return chain;
        } catch (IOException e) {
            throw unreadable(file, role, e);
        } catch (CertificateException e) {
            throw new TlsSetupException(role + " " + file + " is not a PEM certificate (" + e.getMessage()
                    + "); supply the certificate in PEM form, the server's own certificate first", e);
        }
    }

    /** The one private key in {@code file}; an encrypted key or a certificate in its place is refused with the fix. */
    static PrivateKey readPrivateKey(Path file, String role) {
        Object o;
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser p = new PEMParser(r)) {
            o = p.readObject();
        } catch (IOException e) {
            if (e instanceof NoSuchFileException || e instanceof AccessDeniedException) {
                throw unreadable(file, role, e);
            }
            throw new TlsSetupException(role + " " + file + " is not a PEM private key (" + e.getMessage() + ")", e);
        }
        try {
            JcaPEMKeyConverter conv = new JcaPEMKeyConverter();
            if (o instanceof PrivateKeyInfo info) {
                return conv.getPrivateKey(info);
            }
            if (o instanceof PEMKeyPair pair) {
                return conv.getKeyPair(pair).getPrivate();
            }
            if (o instanceof PKCS8EncryptedPrivateKeyInfo || o instanceof PEMEncryptedKeyPair) {
                throw new TlsSetupException(role + " " + file + " is encrypted; the server cannot ask for a passphrase."
                        + " Store it unencrypted with mode 0600 (openssl pkey -in KEY -out server.key) or use a PKCS#12 keystore"
                        + " with holdfast.tls.keystore and holdfast.tls.keystore-password");
            }
            if (o instanceof X509CertificateHolder) {
                throw new TlsSetupException(role + " " + file + " holds a certificate, not a private key;"
                        + " check that holdfast.tls.certificate and holdfast.tls.private-key are not swapped");
            }
        } catch (org.bouncycastle.openssl.PEMException e) {
            throw new TlsSetupException(role + " " + file + " holds a private key this server cannot use: " + e.getMessage(), e);
        }
        throw new TlsSetupException(role + " " + file + " holds no PEM private key; it must contain '-----BEGIN PRIVATE KEY-----'"
                + " (or an RSA or EC private key)");
    }

    /** Writes {@code chain} as PEM, atomically. */
    static void writeCertificates(Path file, List<X509Certificate> chain) throws IOException {
        StringWriter s = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(s)) {
            for (X509Certificate c : chain) {
                w.writeObject(c);
            }
        }
        writeAtomically(file, s.toString(), false);
    }

    /** Writes {@code key} as unencrypted PKCS#8 PEM, readable by its owner only (0600 where the file system has modes). */
    static void writePrivateKey(Path file, PrivateKey key) throws IOException {
        StringWriter s = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(s)) {
            w.writeObject(new JcaPKCS8Generator(key, null));
        }
        writeAtomically(file, s.toString(), true);
    }

    /** Temp file (created with its final mode, so the key is never readable by others, not even briefly), fsync, rename. */
    private static void writeAtomically(Path file, String text, boolean secret) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
        Path tmp = posix
                ? Files.createTempFile(dir, file.getFileName() + ".", ".tmp",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(secret ? "rw-------" : "rw-r--r--")))
                : Files.createTempFile(dir, file.getFileName() + ".", ".tmp");
        try {
            try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    static TlsSetupException unreadable(Path file, String role, IOException e) {
        if (e instanceof NoSuchFileException) {
            return new TlsSetupException(role + " " + file + " does not exist; fix the path, or remove the setting to use a"
                    + " self-signed certificate", e);
        }
        if (e instanceof AccessDeniedException) {
            return new TlsSetupException(role + " " + file + " is not readable by the user running the server; fix its"
                    + " owner or mode (the key should be 0600, owned by that user)", e);
        }
        return new TlsSetupException("cannot read " + role + " " + file + ": " + e, e);
    }
}
