package org.holdfast.server.security;

import java.util.Objects;

/**
 * An API token as stored. Holds the SHA-256 of the secret, never the secret. Times are epoch
 * milliseconds; 0 means "never" for {@code expiresMillis}, "not revoked" for {@code revokedMillis}
 * and "not used yet" for {@code lastUsedMillis}.
 *
 * @param id         public identifier, part of the token text ({@code hft_<id>_<secret>})
 * @param name       what the admin called it (e.g. the host it is for)
 * @param scope      the volumes it reaches; {@link VolumeScope#ALL} for non-agent tokens
 * @param domain     the dedup domain of volumes it creates
 * @param creator    principal name of whoever issued it
 * @param secretHash SHA-256 of the secret's UTF-8 bytes, 32 bytes
 */
public record TokenRecord(String id, String name, Role role, VolumeScope scope, String domain, long createdMillis,
                          long expiresMillis, long revokedMillis, long lastUsedMillis, String creator, byte[] secretHash) {
    /** Bytes of {@link #secretHash()}. */
    public static final int HASH_BYTES = 32;

    public TokenRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(creator, "creator");
        domain = domain == null || domain.isEmpty() ? AccessPrincipal.DEFAULT_DOMAIN : domain;
        if (secretHash == null || secretHash.length != HASH_BYTES) {
            throw new IllegalArgumentException("a token's secret hash has " + HASH_BYTES + " bytes");
        }
        secretHash = secretHash.clone();
    }

    @Override
    public byte[] secretHash() {
        return secretHash.clone();
    }

    public boolean revoked() {
        return revokedMillis != 0;
    }

    /** True if it has an expiry and {@code nowMillis} is at or past it. */
    public boolean expiredAt(long nowMillis) {
        return expiresMillis != 0 && nowMillis >= expiresMillis;
    }

    /** The principal this token stands for. */
    public AccessPrincipal principal() {
        return new AccessPrincipal("token:" + id + "(" + name + ")", role, scope, domain);
    }

    TokenRecord withRevoked(long at) {
        return new TokenRecord(id, name, role, scope, domain, createdMillis, expiresMillis, at, lastUsedMillis, creator, secretHash);
    }

    TokenRecord withLastUsed(long at) {
        return new TokenRecord(id, name, role, scope, domain, createdMillis, expiresMillis, revokedMillis, at, creator, secretHash);
    }
}
