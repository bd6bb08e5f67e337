package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.gc.check.FsckCatalog;
import org.holdfast.gc.sweep.LivePbns;
import org.holdfast.server.jobs.JobContext;

/**
 * The exact mark of reclaim-now: every PBN that some snapshot in the catalog references, as a
 * bitmap. It reads the catalog through the checker's port ({@link FsckCatalog}, implemented by
 * {@link CatalogFsck}), so "retained" means what fsck means by it: every snapshot the catalog still
 * has, held, locked, keep-last pinned or not yet expired. Unlike fsck it keeps one bit per PBN and
 * nothing else (no counts, no expiries). Cost: one scan of every retained snapshot's map, as fsck.
 */
final class ExactMark {
    /** The mark: the live PBNs and how many snapshots were read. */
    record Result(LivePbns live, long snapshots) {
    }

    private ExactMark() {
    }

    /**
     * Marks every retained snapshot's PBNs. Sets the job's total to the snapshots plus
     * {@code laterItems} (the work that follows the mark), reports one item per snapshot, and stops
     * (throwing) between snapshots if asked to: marking changes nothing, so any point is safe.
     * {@code first} is the first PBN of the store's range (the bitmap counts from it).
     */
    static Result run(FsckCatalog catalog, long first, JobContext job, long laterItems) {
        List<FsckCatalog.RetainedSnapshot> snapshots = new ArrayList<>();
        catalog.forEachRetainedSnapshot(snapshots::add);
        job.total(snapshots.size() + laterItems, -1);
        LivePbns live = new LivePbns(first); // pages from the store's range, not from PBN 0
        for (FsckCatalog.RetainedSnapshot s : snapshots) {
            job.checkpoint();
            catalog.forEachPbn(s, live::add);
            job.advance(1, 0);
        }
        return new Result(live, snapshots.size());
    }
}
