package org.holdfast.server.security;

/** A download link that is missing, malformed, altered, expired, or issued for another snapshot or holder (the REST edge answers 403). */
public final class InvalidDownloadLinkException extends RuntimeException {
    public InvalidDownloadLinkException(String message) {
        super(message);
    }
}
