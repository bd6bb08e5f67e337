package org.holdfast.server.gc;

/** A GC request that cannot be carried out in the current state (backup in progress, hold, newest snapshot); nothing was changed. */
public class GcConflictException extends IllegalStateException {
    public GcConflictException(String message) {
        super(message);
    }
}
