package org.holdfast.server.cluster;

/** What a worker offers, as it said in REGISTER: CPUs, maximum heap, and the size of its data directory's disk. */
public record WorkerCapacity(int cpus, long heapMaxBytes, long diskBytes) {
}
