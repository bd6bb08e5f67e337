/**
 * Long operations as jobs (GC, compaction, reclaim-now, fsck, verify): what a job reports while it
 * runs (progress, log lines) and how it is asked to stop at a safe point ({@link
 * org.holdfast.server.jobs.JobContext}); the runner and registry ({@link org.holdfast.server.jobs.Jobs}),
 * which runs jobs in lanes (one job at a time per lane) and keeps their history through a {@link
 * org.holdfast.server.jobs.JobHistory}; and the snapshot view of a job ({@link org.holdfast.server.jobs.Job}).
 * Spring-free.
 */
package org.holdfast.server.jobs;
