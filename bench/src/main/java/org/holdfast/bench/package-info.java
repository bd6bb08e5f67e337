/**
 * The benchmark tool: {@link org.holdfast.bench.HoldfastBench} runs generated workloads against real
 * Holdfast server and agent processes and against restic and borg, and reports throughput, stored
 * bytes, dedup ratio and efficiency, restore speed and peak memory as tables and JSON.
 */
package org.holdfast.bench;
