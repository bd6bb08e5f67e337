package org.holdfast.server.gc;

/**
 * Keeps backups off a volume while it is being deleted. The server backs it with the ingest's
 * per-volume lock, so "a backup is in progress" and "no backup may start" are one check.
 */
public interface VolumeGate {

    /** Takes the volume; false if a backup holds it. */
    boolean tryExclude(String volume);

    /** Gives the volume back. */
    void release(String volume);

    /** No ingest (tests, tools): always free. */
    VolumeGate NONE = new VolumeGate() {
        @Override
        public boolean tryExclude(String volume) {
            return true;
        }

        @Override
        public void release(String volume) {
        }
    };
}
