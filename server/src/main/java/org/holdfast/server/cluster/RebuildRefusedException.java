package org.holdfast.server.cluster;

/**
 * A rebuild of a worker's dedup index that cannot start now (a worker not connected, a rebuild or a
 * GC job already in progress, no cluster engine); the message says why and what to do. Nothing was started.
 */
public final class RebuildRefusedException extends RuntimeException {
    public RebuildRefusedException(String message) {
        super(message);
    }
}
