package org.holdfast.server.cluster;

/** A {@code holdfast.cluster.*} setting makes the master or worker unable to start; the message names the setting and the fix. */
public final class ClusterSetupException extends RuntimeException {
    public ClusterSetupException(String message, Throwable cause) {
        super(message, cause);
    }
}
