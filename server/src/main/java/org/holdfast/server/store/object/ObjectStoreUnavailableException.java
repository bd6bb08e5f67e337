package org.holdfast.server.store.object;

/**
 * The object store failed a request after every retry (timeouts, 5xx, throttling), or refused it
 * (credentials, a missing bucket). Never a statement about the data: nothing is marked corrupt.
 */
public class ObjectStoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ObjectStoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
