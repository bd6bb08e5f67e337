package org.holdfast.gc.check;

/**
 * What {@link Fsck} tells its caller while it runs: the phase it enters and each snapshot it has
 * marked. The check only reads, so an implementation may throw from either call to stop it (a job
 * being cancelled); nothing is left half done.
 */
public interface FsckProgress {
    /** Reports nothing. */
    FsckProgress NONE = new FsckProgress() {
        @Override
        public void phase(String description) {
        }

        @Override
        public void snapshotMarked(FsckCatalog.RetainedSnapshot snapshot) {
        }
    };

    /** A phase begins (mark, compare with the GMA, read back the referenced blocks). */
    void phase(String description);

    /** One retained snapshot's PBNs have been marked. */
    void snapshotMarked(FsckCatalog.RetainedSnapshot snapshot);
}
