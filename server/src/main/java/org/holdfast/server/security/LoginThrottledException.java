package org.holdfast.server.security;

import java.time.Duration;

/** Too many failed logins for this user or from this address; try again after {@link #retryAfter()}. */
public final class LoginThrottledException extends RuntimeException {
    private final Duration retryAfter;

    public LoginThrottledException(Duration retryAfter) {
        super("too many failed logins for this user or from this address; try again in " + Math.max(1, retryAfter.toSeconds()) + " s");
        this.retryAfter = retryAfter;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
