package org.holdfast.common.protocol;

/** DEDUP_DONE (0x49), worker to master: request {@code requestId} (record, forget, control) is done; the worker's load rides along. */
public record DedupDone(long requestId, long[] load) implements Message {
    public DedupDone {
        DedupFrames.checkLength("load", load.length, DedupFrames.LOAD_FIELDS);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_DONE;
    }
}
