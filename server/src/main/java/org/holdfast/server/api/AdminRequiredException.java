package org.holdfast.server.api;

/** A request only an admin may make, made by someone else (answered 403); nothing was changed. */
public class AdminRequiredException extends RuntimeException {
    public AdminRequiredException(String what, String principal) {
        super(what + " needs the admin role; " + principal + " does not have it. Ask an admin.");
    }
}
