package org.holdfast.server.gc;

/** A change refused because a retention lock protects the snapshot; names the lock and its date. Nothing was changed. */
public class SnapshotLockedException extends GcConflictException {
    private final transient RetentionLocks.Lock lock;

    public SnapshotLockedException(RetentionLocks.Lock lock, String what) {
        super(lock.describe() + ": " + what);
        this.lock = lock;
    }

    /** The lock that refused. */
    public RetentionLocks.Lock lock() {
        return lock;
    }
}
