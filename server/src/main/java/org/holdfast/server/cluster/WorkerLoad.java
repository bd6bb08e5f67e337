package org.holdfast.server.cluster;

/**
 * What a worker reported in its last heartbeat: the one-minute system load average times 1000
 * ({@code -1} unknown), heap used and maximum, and the free bytes of its data directory's disk.
 */
public record WorkerLoad(long loadMilli, long heapUsedBytes, long heapMaxBytes, long diskFreeBytes) {
    /** Before the first heartbeat. */
    public static final WorkerLoad NONE = new WorkerLoad(-1, 0, 0, 0);
}
