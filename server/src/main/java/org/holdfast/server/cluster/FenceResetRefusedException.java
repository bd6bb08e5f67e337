package org.holdfast.server.cluster;

/**
 * An admin's reset of a worker's takeover fence that does not match the fence held now (another epoch
 * than the one confirmed, or no fence at all); the message says what is held and what to do. Nothing changed.
 */
public final class FenceResetRefusedException extends RuntimeException {
    public FenceResetRefusedException(String message) {
        super(message);
    }
}
