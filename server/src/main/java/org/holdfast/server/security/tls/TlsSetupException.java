package org.holdfast.server.security.tls;

/**
 * The server's certificate or key cannot be used: missing, unreadable, malformed, or the key does
 * not belong to the certificate. The message names the file and what to do; the server refuses to
 * start rather than fall back to another certificate, which agents would refuse anyway.
 */
public class TlsSetupException extends RuntimeException {
    public TlsSetupException(String message) {
        super(message);
    }

    public TlsSetupException(String message, Throwable cause) {
        super(message, cause);
    }
}
