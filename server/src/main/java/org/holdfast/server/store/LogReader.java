package org.holdfast.server.store;

import java.nio.ByteBuffer;

/** Positional reads of one data log's records, from its local file ({@link DataLog}) or from its object ({@link ArchivedLog}). */
interface LogReader {

    /** Reads exactly {@code len} bytes at {@code offset} into {@code dst} from {@code dstPos} (one stretch of records). */
    void read(long offset, ByteBuffer dst, int dstPos, int len, long pbn);

    /** Where the bytes come from, for error messages: the file's path or the object's key. */
    String name();
}
