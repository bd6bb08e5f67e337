package org.holdfast.server.gc;

/** No named retention policy of that name; nothing was changed. */
public final class UnknownPolicyException extends RuntimeException {
    public UnknownPolicyException(String name) {
        super("no retention policy named '" + name + "'; GET /api/v1/retention/policies lists them");
    }
}
