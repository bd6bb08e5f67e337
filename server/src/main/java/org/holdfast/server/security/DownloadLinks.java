package org.holdfast.server.security;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Short-lived links to one snapshot's image, for a browser: a plain link cannot carry the bearer
 * header, so the console asks for a link (with its token) and hands that to the browser.
 *
 * <p>A link is {@code base64url(payload) "." base64url(HMAC-SHA256(key, payload))}, where the
 * payload is a version byte, the expiry (epoch ms), the volume's internal id, the snapshot's
 * sequence (each 8 bytes, big-endian) and the holder's principal name (UTF-8). Nothing is stored:
 * the key is random and lives in memory, so a restart invalidates every link, which is the safe
 * direction. The internal id (never reused) binds the link to this volume, not to a later volume
 * of the same name. A link is not single-use: a browser may retry or resume (Range) within its life.
 */
public final class DownloadLinks {
    /** How long a link is valid unless configured otherwise. */
    public static final Duration DEFAULT_LIFETIME = Duration.ofMinutes(5);
    /** Longest link text accepted; longer is refused before decoding. */
    static final int MAX_LINK_CHARS = 1024;
    private static final byte VERSION = 1;
    private static final int FIXED = 1 + 8 + 8 + 8;
    private static final String MAC = "HmacSHA256";
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private final Clock clock;
    private final Duration lifetime;
    private final SecretKeySpec key;

    /** An issued link and when it stops working. */
    public record Link(String link, long expiresMillis) {
        @Override
        public String toString() {
            return "Link[expires " + Instant.ofEpochMilli(expiresMillis) + "]"; // the text is a credential
        }
    }

    /** What a valid link allows: its holder, and until when. */
    public record Grant(String principal, long expiresMillis) {
    }

    public DownloadLinks(Clock clock, Duration lifetime) {
        this(clock, lifetime, randomKey());
    }

    DownloadLinks(Clock clock, Duration lifetime, byte[] key) {
        if (lifetime == null || lifetime.isNegative() || lifetime.isZero()) {
            throw new IllegalArgumentException("a download link's lifetime must be positive, got " + lifetime);
        }
        this.clock = Objects.requireNonNull(clock);
        this.lifetime = lifetime;
        this.key = new SecretKeySpec(key, MAC);
    }

    public Duration lifetime() {
        return lifetime;
    }

    /** A link for {@code principal} to snapshot {@code sequence} of the volume with internal id {@code volumeId}. */
    public Link issue(String principal, long volumeId, long sequence) {
        long expires = clock.millis() + lifetime.toMillis();
        byte[] who = principal.getBytes(StandardCharsets.UTF_8);
        byte[] payload = ByteBuffer.allocate(FIXED + who.length).put(VERSION).putLong(expires).putLong(volumeId).putLong(sequence)
                .put(who).array();
        return new Link(B64.encodeToString(payload) + "." + B64.encodeToString(mac(payload)), expires);
    }

    /**
     * The grant of {@code link} for snapshot {@code sequence} of volume {@code volumeId}.
     *
     * @throws InvalidDownloadLinkException if it is missing, malformed, altered, expired, or for another snapshot
     */
    public Grant check(String link, long volumeId, long sequence) {
        if (link == null || link.isBlank()) {
            throw invalid("no download link given");
        }
        int dot = link.indexOf('.');
        if (link.length() > MAX_LINK_CHARS || dot < 1 || dot != link.lastIndexOf('.')) {
            throw invalid("the download link is malformed");
        }
        byte[] payload;
        byte[] mac;
        try {
            payload = Base64.getUrlDecoder().decode(link.substring(0, dot));
            mac = Base64.getUrlDecoder().decode(link.substring(dot + 1));
        } catch (IllegalArgumentException e) {
            throw invalid("the download link is malformed");
        }
        // the signature first: nothing in an unsigned payload is believed, not even its length
        if (!MessageDigest.isEqual(mac, mac(payload))) {
            throw invalid("the download link is not one this server issued (altered, or issued before a restart)");
        }
        ByteBuffer b = ByteBuffer.wrap(payload);
        if (payload.length < FIXED || b.get() != VERSION) {
            throw invalid("the download link is malformed");
        }
        long expires = b.getLong();
        long linkVolume = b.getLong();
        long linkSequence = b.getLong();
        String principal = new String(payload, FIXED, payload.length - FIXED, StandardCharsets.UTF_8);
        if (clock.millis() >= expires) {
            throw invalid("the download link expired at " + Instant.ofEpochMilli(expires));
        }
        if (linkVolume != volumeId || linkSequence != sequence) {
            throw invalid("the download link was issued for another snapshot");
        }
        return new Grant(principal, expires);
    }

    private static InvalidDownloadLinkException invalid(String why) {
        return new InvalidDownloadLinkException(why + "; ask for a new one (POST .../snapshots/{snapshot}/image/link,"
                + " or the Download button of the console's snapshot page)");
    }

    private byte[] mac(byte[] payload) {
        try {
            Mac m = Mac.getInstance(MAC);
            m.init(key);
            return m.doFinal(payload);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no " + MAC, e);
        }
    }

    private static byte[] randomKey() {
        byte[] k = new byte[32];
        new SecureRandom().nextBytes(k);
        return k;
    }
}
