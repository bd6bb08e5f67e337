package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.util.zip.CRC32C;

/**
 * The 32-byte header of a block record, big-endian:
 *
 * <pre>
 * offset size field
 *   0     4   magic "HFBR" (0x48464252)
 *   4     1   codec (1 raw, 2 zstd)
 *   5     3   reserved, zero
 *   8     8   PBN
 *  16     4   raw length (the block size)
 *  20     4   stored length (bytes that follow the header)
 *  24     4   CRC32C of the stored bytes
 *  28     4   CRC32C of header bytes 0..27 (catches a torn or misplaced header)
 * </pre>
 */
final class RecordFormat {
    private RecordFormat() {
    }

    /** Writes the header for a record whose stored bytes already sit at {@code buf[32..32+storedLen)}. */
    static void writeHeader(byte[] buf, long pbn, int codec, int rawLen, int storedLen, CRC32C crc) {
        crc.reset();
        crc.update(buf, RECORD_HEADER_BYTES, storedLen);
        int dataCrc = (int) crc.getValue();
        Bytes.putInt(buf, 0, FormatVersions.RECORD_MAGIC);
        buf[4] = (byte) codec;
        buf[5] = 0;
        buf[6] = 0;
        buf[7] = 0;
        Bytes.putLong(buf, 8, pbn);
        Bytes.putInt(buf, 16, rawLen);
        Bytes.putInt(buf, 20, storedLen);
        Bytes.putInt(buf, 24, dataCrc);
        crc.reset();
        crc.update(buf, 0, 28);
        Bytes.putInt(buf, 28, (int) crc.getValue());
    }

    /**
     * Checks a record read into {@code buf} (header + stored bytes); returns null if sound, else what
     * is wrong.
     */
    static String check(byte[] buf, long expectedPbn, int expectedStoredLen, CRC32C crc) {
        return check(buf, 0, expectedPbn, expectedStoredLen, crc);
    }

    /** {@link #check(byte[], long, int, CRC32C)} for a record starting at {@code base}. */
    static String check(byte[] buf, int base, long expectedPbn, int expectedStoredLen, CRC32C crc) {
        if (Bytes.getInt(buf, base) != FormatVersions.RECORD_MAGIC) {
            return String.format("bad record magic %08x", Bytes.getInt(buf, base));
        }
        if (!crcMatches(buf, base, 28, Bytes.getInt(buf, base + 28), crc)) {
            return "record header checksum mismatch";
        }
        long pbn = Bytes.getLong(buf, base + 8);
        if (pbn != expectedPbn) {
            return "record holds PBN " + pbn;
        }
        int codec = buf[base + 4];
        if (!FormatVersions.isStoredCodec(codec)) {
            return "record has unknown codec " + codec;
        }
        int stored = Bytes.getInt(buf, base + 20);
        if (stored != expectedStoredLen) {
            return "record stored length " + stored + " differs from the location index's " + expectedStoredLen;
        }
        if (!crcMatches(buf, base + RECORD_HEADER_BYTES, stored, Bytes.getInt(buf, base + 24), crc)) {
            return "stored bytes checksum (CRC32C) mismatch";
        }
        return null;
    }

    /** True if the CRC32C of {@code buf[off..off+len)} is {@code expected}. */
    static boolean crcMatches(byte[] buf, int off, int len, int expected, CRC32C crc) {
        crc.reset();
        crc.update(buf, off, len);
        return (int) crc.getValue() == expected;
    }

    static int codec(byte[] buf) {
        return buf[4];
    }

    static int codec(byte[] buf, int base) {
        return buf[base + 4];
    }

    static int rawLength(byte[] buf) {
        return Bytes.getInt(buf, 16);
    }

    static int rawLength(byte[] buf, int base) {
        return Bytes.getInt(buf, base + 16);
    }
}
