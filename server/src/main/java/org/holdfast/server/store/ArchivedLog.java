package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.nio.ByteBuffer;

/** A sealed, uploaded data log whose local file is gone: read through the {@link LogCache}'s ranges of its object. */
final class ArchivedLog implements LogReader {
    private final int id;
    private final String key;
    private final LogCache cache;

    ArchivedLog(int id, String key, LogCache cache) {
        this.id = id;
        this.key = key;
        this.cache = cache;
    }

    @Override
    public void read(long offset, ByteBuffer dst, int dstPos, int len, long pbn) {
        if (offset < DATA_LOG_HEADER_BYTES || len <= 0) {
            throw new CorruptDataException("log-archive", key, "pbn " + pbn, "records at " + offset + "+" + len + " lie outside the log");
        }
        cache.read(id, offset, dst, dstPos, len, pbn);
    }

    @Override
    public String name() {
        return key;
    }
}
