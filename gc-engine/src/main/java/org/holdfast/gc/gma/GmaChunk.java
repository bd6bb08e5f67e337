package org.holdfast.gc.gma;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * One 128 KiB chunk of the GMA in memory. Not thread-safe: callers hold the chunk's lock from
 * {@link GcMetadataArray#lock(long)} while reading or changing it.
 *
 * <p>Updates carry the LSN of their log record; {@link #apply} ignores a record whose LSN is not
 * above the chunk's applied LSN. That makes log replay idempotent: a record applied before a
 * crash (its chunk written, the checkpoint not yet advanced) is skipped when replayed.
 */
public final class GmaChunk {
    private final long index;
    private final GmaLayout layout;
    private final ByteBuffer buf;
    private long appliedLsn;
    /** Write generation of the newest copy (low byte of the header's first int). */
    int generation;
    private boolean dirty;

    GmaChunk(long index, GmaLayout layout) {
        this.index = index;
        this.layout = layout;
        this.buf = ByteBuffer.allocate(GmaFormat.CHUNK_BYTES);
    }

    public long index() {
        return index;
    }

    public long appliedLsn() {
        return appliedLsn;
    }

    public boolean dirty() {
        return dirty;
    }

    private int base(int slot) {
        if (slot < 1 || slot > GmaFormat.PBNS_PER_CHUNK) {
            throw new IllegalArgumentException("slot out of range: " + slot);
        }
        return slot * GmaFormat.SLOT_BYTES;
    }

    public int rc(int slot) {
        return buf.getInt(base(slot));
    }

    public int pins(int slot) {
        return buf.getShort(base(slot) + 4) & 0xFFFF;
    }

    public int flags(int slot) {
        return buf.get(base(slot) + 6) & 0xFF;
    }

    public long expiry(int slot) {
        return buf.getLong(base(slot) + 8);
    }

    public boolean used(int slot) {
        return (flags(slot) & GmaFormat.FLAG_USED) != 0;
    }

    public boolean freed(int slot) {
        return (flags(slot) & GmaFormat.FLAG_FREED) != 0;
    }

    /** Adds {@code delta} to the RC of {@code slot} and marks it USED. */
    public void addRc(int slot, long delta) {
        int b = base(slot);
        buf.putInt(b, (int) (buf.getInt(b) + delta));
        markUsed(b);
    }

    /** ET = max(ET, expiry); marks the slot USED. */
    public void raiseExpiry(int slot, long expiry) {
        int b = base(slot);
        if (expiry > buf.getLong(b + 8)) {
            buf.putLong(b + 8, expiry);
        }
        markUsed(b);
    }

    /** Adds {@code delta} to the pin count, saturating at 0 and {@link GmaFormat#MAX_PINS}. */
    public void addPins(int slot, long delta) {
        int b = base(slot);
        long pins = (buf.getShort(b + 4) & 0xFFFF) + delta;
        pins = Math.max(0, Math.min(GmaFormat.MAX_PINS, pins));
        buf.putShort(b + 4, (short) pins);
        markUsed(b);
    }

    /** Records that the sweep freed this PBN (kept so fsck can tell referenced-but-freed). */
    public void markFreed(int slot) {
        int b = base(slot);
        buf.put(b + 6, (byte) (buf.get(b + 6) | GmaFormat.FLAG_FREED | GmaFormat.FLAG_USED));
        dirty = true;
    }

    private void markUsed(int b) {
        buf.put(b + 6, (byte) (buf.get(b + 6) | GmaFormat.FLAG_USED));
        dirty = true;
    }

    /**
     * Applies one logged update unless the chunk already reflects it. Returns false if skipped.
     */
    public boolean apply(long lsn, int kind, long pbn, long value) {
        if (lsn <= appliedLsn) {
            return false;
        }
        if (layout.chunkOf(pbn) != index) {
            throw new IllegalArgumentException("PBN " + pbn + " is not held by GMA chunk " + index + " (range " + layout.range() + ")");
        }
        int slot = layout.slotOf(pbn);
        switch (kind) {
            case UpdateKinds.RC_ADD -> addRc(slot, value);
            case UpdateKinds.RAISE_EXPIRY -> raiseExpiry(slot, value);
            case UpdateKinds.PIN_ADD -> addPins(slot, value);
            default -> throw new IllegalArgumentException("unknown GMA update kind " + kind);
        }
        appliedLsn = lsn;
        dirty = true;
        return true;
    }

    /** Serialises header and checksum into the buffer; returns a read view of the whole chunk. */
    ByteBuffer seal() {
        buf.putInt(0, GmaFormat.MAGIC_V2 | ((generation + 1) & 0xFF));
        buf.putLong(8, appliedLsn);
        buf.putInt(4, checksum(buf, index));
        ByteBuffer view = buf.duplicate();
        view.clear();
        return view;
    }

    void written() {
        generation = (generation + 1) & 0xFF;
        dirty = false;
    }

    /** Loads a chunk's bytes if valid; returns false (leaving this chunk untouched) otherwise. */
    boolean load(ByteBuffer frame) {
        if (!valid(frame, index)) {
            return false;
        }
        buf.clear();
        ByteBuffer src = frame.duplicate();
        src.clear();
        buf.put(src);
        appliedLsn = buf.getLong(8);
        generation = buf.getInt(0) & 0xFF;
        dirty = false;
        return true;
    }

    /** True if the chunk's magic, version (2) and checksum are right. */
    static boolean valid(ByteBuffer frame, long index) {
        return valid(frame, index, GmaFormat.MAGIC_V2);
    }

    /** True if the frame carries {@code magic} (format 1 or 2) and its checksum is right. */
    static boolean valid(ByteBuffer frame, long index, int magic) {
        return (frame.getInt(0) & GmaFormat.MAGIC_MASK) == magic && frame.getInt(4) == checksum(frame, index);
    }

    /**
     * True if valid copy {@code a} of a chunk is a later version than valid copy {@code b}: a higher
     * applied LSN, or the same LSN (a write that only set FREED marks) and a generation ahead.
     */
    static boolean newer(ByteBuffer a, ByteBuffer b) {
        long la = headerLsn(a);
        long lb = headerLsn(b);
        if (la != lb) {
            return la > lb;
        }
        int ahead = (generation(a) - generation(b)) & 0xFF;
        return ahead != 0 && ahead < 128;
    }

    static int generation(ByteBuffer frame) {
        return frame.getInt(0) & 0xFF;
    }

    static int checksum(ByteBuffer frame, long index) {
        CRC32C crc = new CRC32C();
        crc.update((int) (index >>> 24));
        crc.update((int) (index >>> 16));
        crc.update((int) (index >>> 8));
        crc.update((int) index);
        crc.update(frame.get(3)); // the write generation
        ByteBuffer body = frame.duplicate();
        body.clear();
        body.position(8);
        crc.update(body);
        return (int) crc.getValue();
    }

    static long headerLsn(ByteBuffer frame) {
        return frame.getLong(8);
    }

    /** The update kinds understood by {@link #apply}; the log stores them as one byte. */
    public static final class UpdateKinds {
        public static final int RC_ADD = 1;
        public static final int RAISE_EXPIRY = 2;
        public static final int PIN_ADD = 3;

        private UpdateKinds() {
        }
    }
}
