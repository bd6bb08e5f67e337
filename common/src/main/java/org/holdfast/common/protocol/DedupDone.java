package org.holdfast.common.protocol;

import java.util.Arrays;

/** DEDUP_DONE (0x49), worker to master: request {@code requestId} (record, forget, control) is done; the worker's load rides along. */
public record DedupDone(long requestId, long[] load) implements Message {
    public DedupDone {
        DedupFrames.checkLength("load", load.length, DedupFrames.LOAD_FIELDS);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_DONE;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupDone x && x.requestId == requestId && Arrays.equals(x.load, load);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(load);
    }

    @Override
    public String toString() {
        return "DedupDone[requestId=" + requestId + ", load=" + Arrays.toString(load) + "]";
    }
}
