package org.holdfast.server.app;

import org.holdfast.server.security.PasswordHasher;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;

/**
 * Password hashing by Spring Security's delegating encoder: bcrypt today, with the algorithm named
 * in the stored hash ({@code {bcrypt}$2a$10$...}) so that a later default (Argon2) can verify old
 * hashes and re-hash them on the next password change.
 */
public final class SpringPasswordHasher implements PasswordHasher {
    private final PasswordEncoder encoder = PasswordEncoderFactories.createDelegatingPasswordEncoder();

    @Override
    public String hash(CharSequence password) {
        return encoder.encode(password);
    }

    @Override
    public boolean matches(CharSequence password, String hash) {
        try {
            return encoder.matches(password, hash);
        } catch (IllegalArgumentException e) {
            // an unreadable stored hash, or a password bcrypt refuses (over 72 bytes): not a match
            return false;
        }
    }
}
