package org.holdfast.server.ingest;

import java.util.Arrays;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * The stored frames already in the RESTORE_DATA message being built, by their record's place
 * (log id, offset), each with its ordinal in the message: a later block of the same frame refers
 * to it instead of carrying the frame again. Open addressing over fixed arrays, emptied per
 * message by a generation stamp, so a lookup allocates nothing.
 */
final class SentFrames {
    // a message holds at most MAX_BLOCKS_PER_FRAME blocks, so at most that many frames: keep the table half empty
    private static final int SLOTS = Integer.highestOneBit(ProtocolLimits.MAX_BLOCKS_PER_FRAME) * 4;
    private final int[] logIds = new int[SLOTS];
    private final long[] offsets = new long[SLOTS];
    private final int[] ordinals = new int[SLOTS];
    private final int[] stamps = new int[SLOTS];
    private int generation = 1;

    /** Forgets every frame: the next message starts empty. */
    void clear() {
        if (++generation == 0) {
            Arrays.fill(stamps, 0);
            generation = 1;
        }
    }

    /** The ordinal of the frame at ({@code logId}, {@code offset}) in this message, or -1. */
    int find(int logId, long offset) {
        for (int s = slot(logId, offset); stamps[s] == generation; s = (s + 1) & (SLOTS - 1)) {
            if (logIds[s] == logId && offsets[s] == offset) {
                return ordinals[s];
            }
        }
        return -1;
    }

    /** Records that the frame at ({@code logId}, {@code offset}) went into this message as {@code ordinal}. */
    void add(int logId, long offset, int ordinal) {
        int s = slot(logId, offset);
        while (stamps[s] == generation) {
            s = (s + 1) & (SLOTS - 1);
        }
        stamps[s] = generation;
        logIds[s] = logId;
        offsets[s] = offset;
        ordinals[s] = ordinal;
    }

    private static int slot(int logId, long offset) {
        long h = (offset * 0x9E3779B97F4A7C15L) ^ logId;
        return (int) (h ^ (h >>> 32)) & (SLOTS - 1);
    }
}
