package org.holdfast.bench.workload;

/** How big a workload is: quick for smoke tests and CI, full for the published figures. */
public enum WorkloadScale { QUICK, FULL }
