package org.holdfast.common.tls;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;

/**
 * The SHA-256 digest of a certificate's DER encoding, the value an operator compares by eye.
 * Printed as upper-case hex pairs separated by colons ({@code AB:CD:...}, as {@code openssl x509
 * -fingerprint -sha256} prints it); parsed with or without colons, in either case, with an optional
 * {@code SHA256:} prefix, so that whatever an operator copied from a log or from openssl is accepted.
 */
public final class CertificateFingerprint {
    /** Bytes of a SHA-256 digest. */
    public static final int LENGTH = 32;
    private static final HexFormat PRINTED = HexFormat.ofDelimiter(":").withUpperCase();

    private final byte[] digest;

    private CertificateFingerprint(byte[] digest) {
        this.digest = digest;
    }

    /** The fingerprint of {@code certificate}. */
    public static CertificateFingerprint of(X509Certificate certificate) {
        try {
            return new CertificateFingerprint(MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded()));
        } catch (CertificateEncodingException e) {
            throw new IllegalArgumentException("certificate cannot be encoded: " + e.getMessage(), e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    /**
     * Parses 64 hex digits, optionally in colon-separated pairs and optionally prefixed with
     * {@code SHA256:} or {@code sha256=}; throws {@link IllegalArgumentException} saying what is
     * wrong otherwise.
     */
    public static CertificateFingerprint parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("no fingerprint given");
        }
        String t = text.strip();
        String lower = t.toLowerCase(Locale.ROOT);
        for (String prefix : new String[] {"sha256:", "sha256=", "sha-256:", "sha-256="}) {
            if (lower.startsWith(prefix)) {
                t = t.substring(prefix.length()).strip();
                break;
            }
        }
        String hex = t.replace(":", "");
        if (hex.length() != 2 * LENGTH) {
            throw new IllegalArgumentException("a SHA-256 fingerprint has 64 hex digits (32 pairs), this has "
                    + hex.length() + " characters besides colons: '" + text.strip() + "'");
        }
        try {
            return new CertificateFingerprint(HexFormat.of().parseHex(hex));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a hex SHA-256 fingerprint: '" + text.strip() + "'", e);
        }
    }

    /** A copy of the 32 digest bytes. */
    public byte[] bytes() {
        return digest.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CertificateFingerprint f && MessageDigest.isEqual(digest, f.digest);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(digest);
    }

    /** {@code AB:CD:...}, 95 characters. */
    @Override
    public String toString() {
        return PRINTED.formatHex(digest);
    }
}
