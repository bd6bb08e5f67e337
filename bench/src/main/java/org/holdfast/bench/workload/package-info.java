/**
 * Workloads generated from a seed: a trace-like multi-host workload after thesis chapter 6.1,
 * ext4 images filled with files from Debian packages and changed day by day (loop-mounted or
 * edited with debugfs), and edge cases (all-zero, random, shifted region).
 */
package org.holdfast.bench.workload;
