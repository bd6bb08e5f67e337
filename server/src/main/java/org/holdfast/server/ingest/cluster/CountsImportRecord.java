package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.holdfast.common.id.PbnRange;

/**
 * Which counts file a worker's GC metadata was built from: {@code range-data/gc/counts-imported},
 * written by {@code worker-gc-import} into the directory it builds, so it is swapped in with the
 * metadata it describes and goes with it (GC metadata created afresh has none). The worker reports
 * it at REGISTER (cluster version 7), and the master lifts a catalog restore's counts fence with it.
 *
 * <p>Value (big-endian, 45 bytes): u32 magic {@code HFCI}, u8 version 1, u32 worker id, u64 range
 * first PBN, u64 range limit, u64 the file's mark, u64 time of the import (epoch ms), u32 CRC32C of
 * the 41 bytes before it.
 */
public final class CountsImportRecord {
    /** Its file name, in {@code range-data/gc/}. */
    public static final String FILE = "counts-imported";
    /** "HFCI". */
    public static final int MAGIC = 0x48464349;
    /** Format version. */
    public static final int VERSION = 1;
    static final int BYTES = 4 + 1 + 4 + 8 + 8 + 8 + 8 + 4;

    /** Worker {@code workerId}'s counts over {@code range}, exported at {@code mark}, imported at {@code importedMillis}. */
    public record Imported(long workerId, PbnRange range, long mark, long importedMillis) {
    }

    private CountsImportRecord() {
    }

    /** Writes {@code i} into {@code gcDir} (the directory being built) and forces it to disk. */
    public static void write(Path gcDir, Imported i) {
        try (FileChannel ch = FileChannel.open(gcDir.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer b = ByteBuffer.wrap(encode(i));
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + gcDir.resolve(FILE) + ": " + e.getMessage(), e);
        }
    }

    /**
     * The record in {@code gcDir}, or null if it has none (never imported).
     *
     * @throws IllegalStateException the file exists but does not read as a record
     */
    public static Imported read(Path gcDir) {
        Path f = gcDir.resolve(FILE);
        if (!Files.exists(f)) {
            return null;
        }
        try {
            return decode(Files.readAllBytes(f), f);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + f + ": " + e.getMessage(), e);
        }
    }

    static byte[] encode(Imported i) {
        ByteBuffer b = ByteBuffer.allocate(BYTES).putInt(MAGIC).put((byte) VERSION).putInt((int) i.workerId())
                .putLong(i.range().first()).putLong(i.range().limit()).putLong(i.mark()).putLong(i.importedMillis());
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, BYTES - 4);
        return b.putInt((int) crc.getValue()).array();
    }

    static Imported decode(byte[] v, Path where) {
        ByteBuffer b = ByteBuffer.wrap(v);
        CRC32C crc = new CRC32C();
        crc.update(v, 0, Math.max(0, v.length - 4));
        if (v.length != BYTES || b.getInt() != MAGIC || b.get() != VERSION || b.getInt(BYTES - 4) != (int) crc.getValue()) {
            throw new IllegalStateException(where + " is not a counts-import record of version " + VERSION + " (" + v.length
                    + " bytes, damaged or of another release)");
        }
        long worker = Integer.toUnsignedLong(b.getInt());
        long first = b.getLong();
        long limit = b.getLong();
        long mark = b.getLong();
        if (first < 1 || limit <= first || mark < 0) {
            throw new IllegalStateException(where + " names no valid range and mark ([" + first + ", " + limit + "), " + mark + ")");
        }
        return new Imported(worker, new PbnRange(first, limit), mark, b.getLong());
    }
}
