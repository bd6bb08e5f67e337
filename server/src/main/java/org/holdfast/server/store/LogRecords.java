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
 * The blocks a data log holds, read from its record headers alone, without the catalog: what a
 * catalog restored from a backup cannot know about logs written, or rewritten by compaction, after
 * it. The walk stops at the first header that is not a whole, checksummed record (a torn tail, or
 * the end) and returns where: for an active log a torn tail is normal (nothing past it was ever
 * indexed); a sealed log never has one ({@link LogBlocks}). A frame's members come from its member
 * map, or are its consecutive PBNs.
 */
final class LogRecords {
    private LogRecords() {
    }

    /** Receives one block: its PBN, the offset of its record and the location length field that names it there. */
    @FunctionalInterface
    interface BlockVisitor {
        void visit(long pbn, long offset, int lengthField);
    }

    /** The highest PBN recorded in the log file {@code file}, or 0 if it holds no record. */
    static long maxPbn(Path file) {
        long[] max = new long[1];
        walk(file, (pbn, offset, lengthField) -> max[0] = Math.max(max[0], pbn));
        return max[0];
    }

    /**
     * Visits every block of every whole record of {@code file}, in log order; returns the offset the
     * walk stopped at: the file's size, or the start of the first bytes that are not a whole record.
     */
    static long walk(Path file, BlockVisitor visitor) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            long off = DATA_LOG_HEADER_BYTES;
            byte[] h = new byte[RECORD_HEADER_BYTES];
            CRC32C crc = new CRC32C();
            while (off + RECORD_HEADER_BYTES <= size) {
                read(ch, off, h, RECORD_HEADER_BYTES);
                int magic = Bytes.getInt(h, 0);
                if ((magic != FormatVersions.RECORD_MAGIC && magic != FormatVersions.FRAME_MAGIC)
                        || !RecordFormat.crcMatches(h, 0, 28, Bytes.getInt(h, 28), crc)) {
                    break; // a torn tail: nothing past it was ever indexed
                }
                long first = Bytes.getLong(h, 8);
                int stored = Bytes.getInt(h, 20);
                if (stored <= 0 || stored > FormatVersions.MAX_STORED_BYTES || off + RECORD_HEADER_BYTES + stored > size) {
                    break;
                }
                if (magic == FormatVersions.RECORD_MAGIC) {
                    visitor.visit(first, off, stored);
                } else {
                    int members = Bytes.getShort(h, 6) & 0xFFFF;
                    int lengthField = FrameFormat.memberLocation(stored, members);
                    if ((h[5] & FrameFormat.FLAG_MEMBER_MAP) != 0) {
                        byte[] span = new byte[2];
                        read(ch, off + RECORD_HEADER_BYTES, span, 2);
                        int s = Bytes.getShort(span, 0) & 0xFFFF;
                        byte[] map = new byte[(s + 7) / 8];
                        read(ch, off + RECORD_HEADER_BYTES + 2, map, map.length);
                        for (int k = 0; k < s; k++) {
                            if ((map[k / 8] >>> (k % 8) & 1) != 0) {
                                visitor.visit(first + k, off, lengthField);
                            }
                        }
                    } else {
                        for (int k = 0; k < members; k++) {
                            visitor.visit(first + k, off, lengthField);
                        }
                    }
                }
                off += RECORD_HEADER_BYTES + stored;
            }
            return Math.min(off, size);
        } catch (IOException e) {
            throw StoreException.translate("data-log", file.toString(), null, e);
        }
    }

    private static void read(FileChannel ch, long at, byte[] dst, int len) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(dst, 0, len);
        while (buf.hasRemaining()) {
            if (ch.read(buf, at + buf.position()) < 0) {
                throw new IOException("unexpected end of file at " + (at + buf.position()));
            }
        }
    }
}
