package org.holdfast.server.cluster;

/**
 * A worker's own view of its membership (REST {@code /api/v1/cluster} on a worker): whether it is
 * registered now, and its last assignment (null before the first REGISTERED), and the last error.
 *
 * @param connected  true while the link to the master is registered
 * @param assignment the last REGISTERED's id, epoch and range, or null
 * @param lastError  why the last attempt failed, or null
 */
public record WorkerStatus(boolean connected, WorkerRecord assignment, String lastError) {
    /** Before the first attempt. */
    public static final WorkerStatus STARTING = new WorkerStatus(false, null, null);
}
