package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.util.zip.CRC32C;

/**
 * The 32-byte header of a frame record (data log v2), big-endian, followed by the stored bytes
 * (an optional member map, then one zstd frame holding every member's block in order):
 *
 * <pre>
 * offset size field
 *   0     4   magic "HFFR" (0x48464652)
 *   4     1   codec (2 zstd)
 *   5     1   flags (bit 0: a member map precedes the zstd frame)
 *   6     2   members m (1..2048)
 *   8     8   first PBN
 *  16     4   raw length (m * block size)
 *  20     4   stored length (bytes after the header, member map included)
 *  24     4   CRC32C of the stored bytes
 *  28     4   CRC32C of header bytes 0..27
 * </pre>
 *
 * Without a member map the members are PBNs first..first+m-1. The member map (written by a
 * compaction that kept only some members): u16 span s, then ceil(s/8) bitmap bytes; bit k (byte
 * k/8, bit k%8 from the least significant) set means PBN first+k is a member, whose index in the
 * frame is the number of set bits before it.
 *
 * <p>A member's location (in {@link LocationIndex}) names the frame record: same log and record
 * offset for every member, and in place of a stored length {@link #memberLocation}: bit 31 set,
 * bits 20..30 m-1, bits 0..19 the frame's stored length.
 */
final class FrameFormat {
    static final int FLAG_MEMBER_MAP = 1;
    private static final int MEMBER_BIT = 1 << 31;
    private static final int STORED_MASK = (1 << 20) - 1;

    private FrameFormat() {
    }

    /** The location value of a member of a frame of {@code members} whose record stores {@code storedLength} bytes. */
    static int memberLocation(int storedLength, int members) {
        return MEMBER_BIT | (members - 1) << 20 | storedLength;
    }

    /** True if a location's length field names a frame member. */
    static boolean isMember(int location) {
        return (location & MEMBER_BIT) != 0;
    }

    /** The stored length of the record a location names (block record or frame). */
    static int recordStored(int location) {
        return isMember(location) ? location & STORED_MASK : location;
    }

    /** Members of the frame a member location names (1 for a block record). */
    static int members(int location) {
        return isMember(location) ? (location >>> 20 & 0x7FF) + 1 : 1;
    }

    /** The stored bytes one block accounts for: its record's, or its share of its frame's. */
    static int share(int location) {
        return recordStored(location) / members(location);
    }

    /** Bytes of a member map of span {@code span}. */
    static int mapBytes(int span) {
        return 2 + (span + 7) / 8;
    }

    /** Writes the header for a frame whose stored bytes (member map included) already sit after it at {@code base}. */
    static void writeHeader(byte[] buf, int base, long first, int members, int rawLen, int storedLen, int flags, CRC32C crc) {
        crc.reset();
        crc.update(buf, base + RECORD_HEADER_BYTES, storedLen);
        int dataCrc = (int) crc.getValue();
        Bytes.putInt(buf, base, FormatVersions.FRAME_MAGIC);
        buf[base + 4] = (byte) FormatVersions.CODEC_ZSTD;
        buf[base + 5] = (byte) flags;
        Bytes.putShort(buf, base + 6, members);
        Bytes.putLong(buf, base + 8, first);
        Bytes.putInt(buf, base + 16, rawLen);
        Bytes.putInt(buf, base + 20, storedLen);
        Bytes.putInt(buf, base + 24, dataCrc);
        crc.reset();
        crc.update(buf, base, 28);
        Bytes.putInt(buf, base + 28, (int) crc.getValue());
    }

    /**
     * Checks a frame record read into {@code buf} at {@code base} (header and stored bytes):
     * checksums, limits, member map; null if sound, else what is wrong.
     */
    static String check(byte[] buf, int base, int expectedStoredLen, CRC32C crc) {
        if (Bytes.getInt(buf, base) != FormatVersions.FRAME_MAGIC) {
            return String.format("bad frame record magic %08x", Bytes.getInt(buf, base));
        }
        if (!RecordFormat.crcMatches(buf, base, 28, Bytes.getInt(buf, base + 28), crc)) {
            return "frame record header checksum mismatch";
        }
        if (buf[base + 4] != FormatVersions.CODEC_ZSTD) {
            return "frame record has unknown codec " + buf[base + 4];
        }
        int m = members(buf, base);
        int raw = Bytes.getInt(buf, base + 16);
        if (m < 1 || m > FormatVersions.FRAME_MAX_MEMBERS || raw <= 0 || raw > FormatVersions.FRAME_MAX_RAW || raw % m != 0
                || !FormatVersions.isValidBlockSize(raw / m)) {
            return "frame record of " + m + " members and " + raw + " raw bytes is outside the limits";
        }
        int stored = Bytes.getInt(buf, base + 20);
        if (stored != expectedStoredLen) {
            return "frame stored length " + stored + " differs from the location index's " + expectedStoredLen;
        }
        if (!RecordFormat.crcMatches(buf, base + RECORD_HEADER_BYTES, stored, Bytes.getInt(buf, base + 24), crc)) {
            return "frame stored bytes checksum (CRC32C) mismatch";
        }
        if (hasMap(buf, base)) {
            int span = Bytes.getShort(buf, base + RECORD_HEADER_BYTES);
            if (span < m || mapBytes(span) >= stored) {
                return "frame member map of span " + span + " does not fit " + m + " members in " + stored + " bytes";
            }
            int bits = 0;
            for (int i = 0; i < (span + 7) / 8; i++) {
                bits += Integer.bitCount(buf[base + RECORD_HEADER_BYTES + 2 + i] & 0xFF);
            }
            if (bits != m) {
                return "frame member map names " + bits + " members, the header " + m;
            }
        }
        return null;
    }

    static int members(byte[] buf, int base) {
        return Bytes.getShort(buf, base + 6);
    }

    static long first(byte[] buf, int base) {
        return Bytes.getLong(buf, base + 8);
    }

    static int rawLength(byte[] buf, int base) {
        return Bytes.getInt(buf, base + 16);
    }

    static int blockSize(byte[] buf, int base) {
        return rawLength(buf, base) / members(buf, base);
    }

    static boolean hasMap(byte[] buf, int base) {
        return (buf[base + 5] & FLAG_MEMBER_MAP) != 0;
    }

    /** Offset of the zstd frame from the record start: after the header and any member map. */
    static int payloadOffset(byte[] buf, int base) {
        return RECORD_HEADER_BYTES + (hasMap(buf, base) ? mapBytes(Bytes.getShort(buf, base + RECORD_HEADER_BYTES)) : 0);
    }

    /** The index of {@code pbn} in the (checked) frame at {@code base}, or -1 if it is not a member. */
    static int memberIndex(byte[] buf, int base, long pbn) {
        long k = pbn - first(buf, base);
        int m = members(buf, base);
        if (!hasMap(buf, base)) {
            return k >= 0 && k < m ? (int) k : -1;
        }
        int span = Bytes.getShort(buf, base + RECORD_HEADER_BYTES);
        if (k < 0 || k >= span) {
            return -1;
        }
        int map = base + RECORD_HEADER_BYTES + 2;
        int bit = (int) k;
        if ((buf[map + bit / 8] & 1 << (bit % 8)) == 0) {
            return -1;
        }
        int rank = 0;
        for (int i = 0; i < bit / 8; i++) {
            rank += Integer.bitCount(buf[map + i] & 0xFF);
        }
        return rank + Integer.bitCount(buf[map + bit / 8] & ((1 << (bit % 8)) - 1));
    }
}
