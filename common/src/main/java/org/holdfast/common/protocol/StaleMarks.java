package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * STALE_MARKS (0x64), worker to master (cluster version 8, {@link Register#STALE_MARKS_VERSION}): one
 * part of the blocks a range sweep of the worker freed, PBNs with their fingerprints (as its own engine
 * forgot them), numbered {@code partId} by the worker; the master forwards them to the other workers'
 * engines and answers {@link StaleMarksTaken}. At most {@link ProtocolLimits#MAX_DEDUP_ENTRIES} marks.
 */
public record StaleMarks(long partId, int count, long[] pbns, byte[] fps) implements Message {
    public StaleMarks {
        if (count < 1 || count > ProtocolLimits.MAX_DEDUP_ENTRIES) {
            throw new IllegalArgumentException("STALE_MARKS count " + count + " is not within 1.." + ProtocolLimits.MAX_DEDUP_ENTRIES);
        }
        DedupFrames.checkLength("pbns", pbns.length, count);
        DedupFrames.checkLength("fps", fps.length, count * 32L);
    }

    @Override
    public MessageType type() {
        return MessageType.STALE_MARKS;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof StaleMarks x && x.partId == partId && x.count == count && Arrays.equals(x.pbns, pbns)
                && Arrays.equals(x.fps, fps);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(partId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "StaleMarks[partId=" + partId + ", count=" + count + "]";
    }
}
