package org.holdfast.server.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/** Random secrets and their SHA-256, from the JDK's {@link SecureRandom} and {@link MessageDigest}. */
public final class Secrets {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private Secrets() {
    }

    /** {@code bytes} random bytes as unpadded base64url (43 characters for 32 bytes). */
    public static String randomText(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return B64.encodeToString(b);
    }

    /** {@code bytes} random bytes as lower-case hex. */
    public static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        StringBuilder s = new StringBuilder(bytes * 2);
        for (byte x : b) {
            s.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return s.toString();
    }

    /** SHA-256 of the UTF-8 bytes of {@code text}. */
    public static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** A random password for a new or reset admin: 24 characters, 144 bits. */
    public static String randomPassword() {
        return randomText(18);
    }
}
