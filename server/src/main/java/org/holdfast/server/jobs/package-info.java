/**
 * Long operations as jobs (GC, compaction, reclaim-now, fsck, verify): what a job reports while it
 * runs (progress, log lines) and how it is asked to stop at a safe point. Spring-free.
 */
package org.holdfast.server.jobs;
