package org.holdfast.server.security;

/** A user name or token id that names nothing (the REST edge answers 404). */
public final class UnknownCredentialException extends RuntimeException {
    public UnknownCredentialException(String message) {
        super(message);
    }
}
