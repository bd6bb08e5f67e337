package org.holdfast.server.gc;

import org.holdfast.gc.check.FsckCatalog;
import org.holdfast.gc.check.FsckProgress;
import org.holdfast.server.jobs.JobContext;

/** fsck's progress as a job's: a log line per phase, an item per snapshot, and a safe point after each (fsck only reads). */
final class FsckJobProgress implements FsckProgress {
    private final JobContext job;

    FsckJobProgress(JobContext job) {
        this.job = job;
    }

    @Override
    public void phase(String description) {
        job.log("fsck " + description);
        job.checkpoint();
    }

    @Override
    public void snapshotMarked(FsckCatalog.RetainedSnapshot snapshot) {
        job.advance(1, 0);
        job.checkpoint();
    }
}
