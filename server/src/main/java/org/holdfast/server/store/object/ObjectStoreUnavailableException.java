package org.holdfast.server.store.object;

/**
 * The object store failed a request after every retry (timeouts, 5xx, throttling), or refused it
 * (credentials, a missing bucket). Never a statement about the data: nothing is marked corrupt.
 * {@link #reason()} says which, so that a start can tell the operator what to fix.
 */
public class ObjectStoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why the store could not be used. */
    public enum Reason {
        /** No answer: connection refused or reset, DNS, timeouts. */
        UNREACHABLE,
        /** The bucket does not exist (404 NoSuchBucket). */
        NO_SUCH_BUCKET,
        /** The credentials were refused (403). */
        ACCESS_DENIED,
        /** 5xx, 503 Slow Down or 429 on every attempt. */
        FAILING,
        /** Another refusal (4xx), or the store lacks what holdfast needs (create-only PUTs). */
        REJECTED
    }

    private final Reason reason;

    public ObjectStoreUnavailableException(String message, Throwable cause) {
        this(Reason.FAILING, message, cause);
    }

    public ObjectStoreUnavailableException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
