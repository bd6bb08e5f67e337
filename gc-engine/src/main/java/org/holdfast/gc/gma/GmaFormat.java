package org.holdfast.gc.gma;

/**
 * Byte layout of the GMA file, in one place. All numbers big-endian.
 *
 * <pre>
 * file  = chunk 0 | chunk 1 | chunk 2 | ...      (format 2; format 1 had two frames per chunk, A and B)
 * chunk = 131072 bytes = header slot (16 bytes) + 8191 PBN slots (16 bytes each)
 * header: [0..2] magic+version 0x484702  [3] write generation (wraps at 256)  [4..7] CRC32C of
 *         bytes 8..131071 seeded with the chunk index  [8..15] applied LSN (highest BOSC log record
 *         applied to this chunk)
 * slot:   [0..3] RC (int32)  [4..5] pin count (uint16)  [6] flags (bit0 USED, bit1 FREED)
 *         [7] reserved  [8..15] ET, epoch milliseconds (int64)
 * </pre>
 *
 * A chunk is written in place only after the same bytes are durable in the double-write journal
 * ({@link DoubleWriteJournal}, {@code gma.dw}), so a torn in-place write is mended from the journal
 * at the next open and a torn journal write leaves the old chunk in place, which log replay brings
 * up to date. Format 1 ("ping-pong": each chunk twice, a write going to the frame that did not hold
 * the newest copy) cost two frames per chunk at rest; it is converted at open ({@link GmaV1Migration}).
 *
 * <pre>
 * gma.gen = header (8 bytes: [0..3] magic+version 0x48474E01, [4..7] reserved) | entry of chunk 0 | entry of chunk 1 | ...
 * entry   = 2 bytes: [0] 0x01 once recorded (0x00: never recorded)  [1] write generation of the
 *           chunk's newest version known to be durable (written after the GMA file is forced)
 * </pre>
 *
 * <pre>
 * gma.range = 24 bytes: [0..3] magic+version 0x48475201  [4..7] CRC32C of bytes 8..23
 *             [8..15] first PBN of the range  [16..23] limit (first PBN past the range)
 * </pre>
 *
 * {@code gma.range} exists only for a GMA over a PBN range other than the standalone one
 * ({@link GmaLayout}): chunk indexes then count from the range, slot 1 of chunk 0 holding PBN
 * first - 1. No file: the standalone range [1, 2^63-1), slot 1 of chunk 0 holding PBN 0, as
 * before ranges existed. The static helpers below are the standalone layout.
 *
 * A journal copy replaces a damaged chunk only if it is not older than the generation
 * {@code gma.gen} records (see {@link GenerationTable}); otherwise the newest durable version is
 * lost and the chunk is reported damaged.
 */
public final class GmaFormat {
    /** Bytes of one chunk on disk (128 KiB as in the thesis). */
    public static final int CHUNK_BYTES = 128 * 1024;
    /** Bytes per PBN slot. */
    public static final int SLOT_BYTES = 16;
    /** PBN slots per chunk: slot 0 is the header. */
    public static final int PBNS_PER_CHUNK = CHUNK_BYTES / SLOT_BYTES - 1;
    /** Magic and format version 2 of a chunk header: the top three bytes of the first int. */
    public static final int MAGIC_V2 = 0x48470200;
    /** Magic and format version 1 (two frames per chunk), read only to convert it. */
    public static final int MAGIC_V1 = 0x48470100;
    /** Frames per chunk in format 1 (A and B). */
    static final int V1_FRAMES_PER_CHUNK = 2;
    /** Mask selecting the magic and version in the first int (the low byte is the generation). */
    public static final int MAGIC_MASK = 0xFFFFFF00;

    /** File name of the GMA. */
    public static final String FILE = "gma.dat";
    /** File name of the double-write journal. */
    public static final String JOURNAL_FILE = "gma.dw";
    /** Magic of a journal record header ("HGDW"). */
    static final int JOURNAL_MAGIC = 0x48474457;
    /** Bytes of a journal record header: magic (4), reserved (4), chunk index (8). */
    static final int JOURNAL_HEADER_BYTES = 16;

    /** File name of the range record (a range GMA only). */
    public static final String RANGE_FILE = "gma.range";
    /** Magic and format version 1 of the range record ("HGR" 1). */
    static final int RANGE_MAGIC_V1 = 0x48475201;
    /** Bytes of the range record. */
    static final int RANGE_FILE_BYTES = 24;

    /** File name of the generation table. */
    public static final String GENERATIONS_FILE = "gma.gen";
    /** Magic and format version 1 of the generation table's header. */
    public static final int GEN_MAGIC_V1 = 0x48474E01;
    /** Bytes before the first entry of the generation table. */
    public static final int GEN_HEADER_BYTES = 8;
    /** First byte of a recorded generation-table entry. */
    static final byte GEN_RECORDED = 1;

    public static final int FLAG_USED = 1;
    public static final int FLAG_FREED = 2;
    /** Largest pin count a slot holds. */
    public static final int MAX_PINS = 0xFFFF;

    private GmaFormat() {
    }

    /** Chunk that holds {@code pbn}. */
    public static long chunkOf(long pbn) {
        return pbn / PBNS_PER_CHUNK;
    }

    /** Slot index of {@code pbn} inside its chunk (1-based; 0 is the header). */
    public static int slotOf(long pbn) {
        return (int) (pbn % PBNS_PER_CHUNK) + 1;
    }

    /** The PBN held in slot {@code slot} of chunk {@code chunk}. */
    public static long pbnAt(long chunk, int slot) {
        return chunk * PBNS_PER_CHUNK + slot - 1;
    }

    /** File offset of chunk {@code chunk}. */
    public static long chunkOffset(long chunk) {
        return chunk * CHUNK_BYTES;
    }

    /** File offset of frame {@code frame} (0 = A, 1 = B) of chunk {@code chunk} in format 1. */
    static long v1FrameOffset(long chunk, int frame) {
        return (chunk * V1_FRAMES_PER_CHUNK + frame) * (long) CHUNK_BYTES;
    }
}
