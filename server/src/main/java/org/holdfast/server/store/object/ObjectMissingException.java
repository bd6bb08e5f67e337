package org.holdfast.server.store.object;

/** The store answered that the object does not exist (404 NoSuchKey; any other 404 is no such statement). */
public class ObjectMissingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ObjectMissingException(String key) {
        super("object " + key + " does not exist in the object store");
    }
}
