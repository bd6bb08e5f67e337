package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;
import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The highest PBN a data log holds, found by walking its record headers (block and frame records)
 * without the catalog: what a catalog restored from a backup cannot know about the logs written
 * after it. The walk stops at the first header that is not a whole, checksummed record (a torn
 * tail, or the end); a frame's member map gives its span.
 */
final class LogHighWater {
    private LogHighWater() {
    }

    /** The highest PBN recorded in the log file {@code file}, or 0 if it holds no record. */
    static long maxPbn(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            long off = DATA_LOG_HEADER_BYTES;
            long max = 0;
            byte[] h = new byte[RECORD_HEADER_BYTES + 2];
            CRC32C crc = new CRC32C();
            while (off + RECORD_HEADER_BYTES <= size) {
                ByteBuffer buf = ByteBuffer.wrap(h);
                int want = (int) Math.min(h.length, size - off);
                buf.limit(want);
                while (buf.hasRemaining()) {
                    if (ch.read(buf, off + buf.position()) < 0) {
                        break;
                    }
                }
                int magic = Bytes.getInt(h, 0);
                if ((magic != FormatVersions.RECORD_MAGIC && magic != FormatVersions.FRAME_MAGIC)
                        || !RecordFormat.crcMatches(h, 0, 28, Bytes.getInt(h, 28), crc)) {
                    break; // a torn tail: nothing past it was ever indexed
                }
                long first = Bytes.getLong(h, 8);
                int stored = Bytes.getInt(h, 20);
                if (stored < 0 || off + RECORD_HEADER_BYTES + stored > size) {
                    break;
                }
                long last = first;
                if (magic == FormatVersions.FRAME_MAGIC) {
                    boolean mapped = (h[5] & FrameFormat.FLAG_MEMBER_MAP) != 0;
                    int span = mapped && want >= RECORD_HEADER_BYTES + 2 ? Bytes.getShort(h, RECORD_HEADER_BYTES) & 0xFFFF
                            : Bytes.getShort(h, 6) & 0xFFFF;
                    last = first + Math.max(span, 1) - 1;
                }
                max = Math.max(max, last);
                off += RECORD_HEADER_BYTES + stored;
            }
            return max;
        } catch (IOException e) {
            throw StoreException.translate("data-log", file.toString(), null, e);
        }
    }
}
