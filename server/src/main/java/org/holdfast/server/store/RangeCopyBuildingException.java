package org.holdfast.server.store;

/**
 * A block whose lost worker's range is still being copied from the bucket ({@link RangeCopy}) and is
 * not copied yet: a read of it would wait for the build. Thrown instead of waiting where an answer
 * must come at once (an HTTP response that has sent nothing yet); {@link #progress} says how far the
 * copy is. Retry later; nothing changed.
 */
public final class RangeCopyBuildingException extends BlocksUnavailableException {
    private final RangeCopy.Progress progress;

    public RangeCopyBuildingException(long pbn, RangeCopy.Progress progress) {
        super("PBN " + pbn + " lives on worker " + progress.worker() + ", which is lost; its range is being copied from the bucket ("
                + progress.logsDone() + " of " + progress.logsTotal() + " logs, " + String.format(java.util.Locale.ROOT, "%.1f",
                progress.bytesDone() / 1048576.0) + " MiB so far, " + (progress.secondsLeft() < 0 ? "time left not known yet"
                : "about " + progress.secondsLeft() + " s left") + ") and this block is not copied yet: retry then (Retry-After), or"
                + " bring the worker back (docs/operations.md \"Restore while a worker is dead\")", null);
        this.progress = progress;
    }

    public RangeCopy.Progress progress() {
        return progress;
    }
}
