package org.holdfast.server.security;

/** A credential was refused. The message says why without repeating the secret. */
public final class AuthenticationFailedException extends RuntimeException {
    /** Why a credential was refused. */
    public enum Reason {
        MISSING, MALFORMED, UNKNOWN, EXPIRED, REVOKED, BAD_PASSWORD, RATE_LIMITED
    }

    private final Reason reason;

    public AuthenticationFailedException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
