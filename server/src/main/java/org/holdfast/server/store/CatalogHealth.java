package org.holdfast.server.store;

import java.lang.System.Logger.Level;
import org.rocksdb.AbstractEventListener;
import org.rocksdb.BackgroundErrorReason;
import org.rocksdb.Status;

/**
 * Watches the catalog database for background errors: when a flush, a compaction or a write-ahead
 * log write fails, RocksDB stops taking writes (read-only until it recovers) and tells its event
 * listeners. This one remembers why, so the health check can say the catalog is down and API writes
 * can answer {@link CatalogStoppedException} instead of an opaque failure. RocksDB's own recovery
 * (it may retry a failed flush or compaction once space is back) clears it; a failed write-ahead-log
 * write stays until the server restarts (the Java API has no resume).
 *
 * <p>Native: registered as a listener on the database options; {@link MetadataDb} owns and closes it.
 */
public final class CatalogHealth extends AbstractEventListener {
    /** What the operator does about a stopped catalog. */
    public static final String ACTION = "free space on the data disk (delete files other programs wrote there, or grow the"
            + " disk), then restart the server: RocksDB does not resume a failed write-ahead-log write in place (a failed"
            + " flush or compaction it may retry by itself); nothing committed is lost; see docs/operations.md, \"Troubleshooting\"";
    private static final System.Logger LOG = System.getLogger(CatalogHealth.class.getName());

    private final String path;
    private volatile String stopped;
    private final java.util.concurrent.atomic.AtomicLong errors = new java.util.concurrent.atomic.AtomicLong();

    CatalogHealth(String path) {
        super(EnabledEventCallback.ON_BACKGROUND_ERROR, EnabledEventCallback.ON_ERROR_RECOVERY_COMPLETED);
        this.path = path;
    }

    @Override
    public void onBackgroundError(BackgroundErrorReason reason, Status status) {
        if (status == null || status.getCode() == Status.Code.Ok) {
            return;
        }
        errors.incrementAndGet();
        String why = describe(reason, status);
        stopped = why;
        LOG.log(Level.ERROR, "catalog " + path + " stopped taking writes: " + why + "; " + ACTION);
    }

    @Override
    public void onErrorRecoveryCompleted(Status oldBackgroundError) {
        if (stopped != null) {
            LOG.log(Level.INFO, "catalog " + path + " takes writes again (recovered from: " + stopped + ")");
        }
        stopped = null;
    }

    /** Why the catalog takes no writes now, or null while it does. */
    public String stoppedReason() {
        return stopped;
    }

    /** Background errors seen since the database opened. */
    public long backgroundErrors() {
        return errors.get();
    }

    private static String describe(BackgroundErrorReason reason, Status status) {
        String what = switch (reason) {
            case FLUSH -> "a memtable flush failed";
            case COMPACTION -> "a compaction failed";
            case WRITE_CALLBACK -> "a write-ahead-log write failed";
            case MEMTABLE -> "a memtable insert failed";
            default -> "a background write failed";
        };
        String state = status.getState();
        return what + ": " + status.getCodeString() + (state == null || state.isBlank() ? "" : " " + state);
    }
}
