package org.holdfast.server.store;

/** When the data logs and the metadata database are forced to disk. */
public enum FsyncPolicy {
    /** Before a snapshot commit is acknowledged (and on log roll and shutdown). The only safe choice. */
    COMMIT,
    /** Never: for benchmarks and throwaway tests only; a crash can lose acknowledged snapshots. */
    NONE;

    public boolean forces() {
        return this == COMMIT;
    }
}
