package org.holdfast.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class DownloadLinksTest {
    private static final Instant T0 = Instant.parse("2026-11-25T20:00:00Z");
    private static final byte[] KEY = new byte[32];

    static {
        Arrays.fill(KEY, (byte) 7);
    }

    private static DownloadLinks at(Instant t) {
        return new DownloadLinks(Clock.fixed(t, ZoneOffset.UTC), Duration.ofMinutes(5), KEY);
    }

    @Test
    void check_freshLinkForItsSnapshot_grantsItsHolderUntilExpiry() {
        DownloadLinks.Link link = at(T0).issue("user:alice", 42, 7);
        assertThat(link.expiresMillis()).isEqualTo(T0.plus(Duration.ofMinutes(5)).toEpochMilli());
        assertThat(link.link()).matches("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+");
        assertThat(link.toString()).doesNotContain(link.link());

        DownloadLinks.Grant grant = at(T0.plusSeconds(299)).check(link.link(), 42, 7);
        assertThat(grant.principal()).isEqualTo("user:alice");
        assertThat(grant.expiresMillis()).isEqualTo(link.expiresMillis());
    }

    @Test
    void check_atOrAfterExpiry_isRefusedNamingTheTime() {
        String link = at(T0).issue("user:alice", 42, 7).link();
        assertThatThrownBy(() -> at(T0.plusSeconds(300)).check(link, 42, 7))
                .isInstanceOf(InvalidDownloadLinkException.class).hasMessageContaining("expired at 2026-11-25T20:05:00Z");
    }

    @Test
    void check_otherSnapshotOrVolume_isRefused() {
        String link = at(T0).issue("user:alice", 42, 7).link();
        assertThatThrownBy(() -> at(T0).check(link, 42, 8))
                .isInstanceOf(InvalidDownloadLinkException.class).hasMessageContaining("another snapshot");
        // a later volume of the same name has another internal id
        assertThatThrownBy(() -> at(T0).check(link, 43, 7))
                .isInstanceOf(InvalidDownloadLinkException.class).hasMessageContaining("another snapshot");
    }

    @Test
    void check_alteredPayloadOrSignature_isRefused() {
        String link = at(T0).issue("user:alice", 42, 7).link();
        int dot = link.indexOf('.');
        byte[] payload = Base64.getUrlDecoder().decode(link.substring(0, dot));
        // move the expiry a day later, keep the signature
        long later = T0.plus(Duration.ofDays(1)).toEpochMilli();
        for (int i = 0; i < 8; i++) {
            payload[1 + i] = (byte) (later >>> (56 - 8 * i));
        }
        String forged = Base64.getUrlEncoder().withoutPadding().encodeToString(payload) + link.substring(dot);
        assertThatThrownBy(() -> at(T0.plus(Duration.ofHours(1))).check(forged, 42, 7))
                .isInstanceOf(InvalidDownloadLinkException.class).hasMessageContaining("not one this server issued");

        char last = link.charAt(link.length() - 1);
        String badMac = link.substring(0, link.length() - 1) + (last == 'A' ? 'B' : 'A');
        assertThatThrownBy(() -> at(T0).check(badMac, 42, 7))
                .isInstanceOf(InvalidDownloadLinkException.class).hasMessageContaining("not one this server issued");
    }

    @Test
    void check_linkOfAnotherKey_isRefused() {
        // another server, or this one after a restart (a new random key)
        String link = new DownloadLinks(Clock.fixed(T0, ZoneOffset.UTC), Duration.ofMinutes(5)).issue("user:alice", 42, 7).link();
        assertThatThrownBy(() -> at(T0).check(link, 42, 7)).isInstanceOf(InvalidDownloadLinkException.class);
    }

    @Test
    void check_missingOrMalformed_isRefusedWithWhatToDo() {
        DownloadLinks links = at(T0);
        for (String bad : new String[] {null, "", "abc", "a.b.c", "!!!.???", "x".repeat(2000) + ".y", ".abc"}) {
            assertThatThrownBy(() -> links.check(bad, 42, 7)).as(String.valueOf(bad))
                    .isInstanceOf(InvalidDownloadLinkException.class).hasMessageContaining("ask for a new one");
        }
    }

    @Test
    void constructor_nonPositiveLifetime_isRefused() {
        assertThatThrownBy(() -> new DownloadLinks(Clock.systemUTC(), Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
