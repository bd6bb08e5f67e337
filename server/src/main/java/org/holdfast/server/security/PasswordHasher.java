package org.holdfast.server.security;

/**
 * One-way password hashing with a slow, salted algorithm. Implemented in {@code app} with Spring
 * Security's encoder: passwords are never hashed by hand here.
 */
public interface PasswordHasher {
    /** A salted hash of {@code password}, self-describing (algorithm and cost inside). */
    String hash(CharSequence password);

    /** True if {@code password} is the one {@code hash} was made from. */
    boolean matches(CharSequence password, String hash);
}
