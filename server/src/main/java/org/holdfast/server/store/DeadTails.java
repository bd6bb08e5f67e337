package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.util.Map;
import java.util.TreeMap;

/**
 * The dead tails of sealed logs a compaction run must leave for lack of room: the bytes after a
 * log's last live record. Cutting them costs no copy, so on a full disk they come back at once; a
 * failed backup's blocks, the last written, usually are such a tail. Fed the live records of the
 * tracked logs (a pass over the locations made after the logs were sealed and indexed); only frees
 * happen after it, so a log's live end can only move down meanwhile.
 */
final class DeadTails {
    private final Map<Integer, long[]> liveEnd = new TreeMap<>(); // log id -> {end of its last live record}

    /** Tracks sealed log {@code id}. */
    void track(int id) {
        liveEnd.put(id, new long[1]);
    }

    boolean isEmpty() {
        return liveEnd.isEmpty();
    }

    /** Notes a live record of log {@code logId} at {@code offset} ({@code location} as the location index holds it). */
    void live(int logId, long offset, int location) {
        long[] end = liveEnd.get(logId);
        if (end != null) {
            end[0] = Math.max(end[0], offset + RECORD_HEADER_BYTES + FrameFormat.recordStored(location));
        }
    }

    /** The tracked logs and their live ends (0: no live record left). */
    Map<Integer, long[]> ends() {
        return liveEnd;
    }
}
