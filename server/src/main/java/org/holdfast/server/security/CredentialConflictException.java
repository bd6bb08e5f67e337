package org.holdfast.server.security;

/** A change to users or tokens that would break a rule (a duplicate name, removing the last admin). */
public final class CredentialConflictException extends RuntimeException {
    public CredentialConflictException(String message) {
        super(message);
    }
}
