package org.holdfast.server.ingest;

import java.util.concurrent.ConcurrentHashMap;

/** Which volumes have a backup in progress: one backup per volume at a time. */
public final class VolumeLocks {
    private final ConcurrentHashMap<String, Long> held = new ConcurrentHashMap<>();

    /** Takes the volume for {@code sessionId}; false if another session holds it. */
    public boolean tryLock(String volume, long sessionId) {
        return held.putIfAbsent(volume, sessionId) == null;
    }

    /** Releases the volume if {@code sessionId} holds it. */
    public void unlock(String volume, long sessionId) {
        held.remove(volume, sessionId);
    }

    public boolean isLocked(String volume) {
        return held.containsKey(volume);
    }
}
