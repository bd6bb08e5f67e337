package org.holdfast.gc.gma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.AtomicFileReplace;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;

/**
 * The PBN range a GMA was created for, in {@code gma.range} beside {@code gma.dat} (layout in
 * {@link GmaFormat}). A standalone GMA has no such file (its bytes stay as before ranges existed):
 * no file means {@link PbnRange#STANDALONE}. Written once, before the first chunk, so a GMA is
 * never reopened over another range (its chunk indexes would name other PBNs).
 */
final class GmaRangeFile {
    private static final String STORE = "gma-range";

    private GmaRangeFile() {
    }

    /**
     * Checks that the GMA in {@code dir} was made for {@code range}, recording the range if the GMA
     * is new; refuses (changing nothing) a GMA of another range.
     */
    static void bind(Path dir, PbnRange range) {
        Path file = dir.resolve(GmaFormat.RANGE_FILE);
        PbnRange stored = read(file);
        if (stored == null) {
            if (range.equals(PbnRange.STANDALONE)) {
                return;
            }
            if (hasChunks(dir.resolve(GmaFormat.FILE))) {
                stored = PbnRange.STANDALONE; // chunks written before any range: a standalone GMA
            } else {
                write(dir, range);
                return;
            }
        }
        if (!stored.equals(range)) {
            throw new IllegalStateException("the GC metadata in " + dir + " was made for PBN range " + describe(stored) + ", not "
                    + describe(range) + ": it is another node's GC directory (or this node's range changed); nothing was"
                    + " changed; point the node at its own data directory, or give it back the range " + stored);
        }
    }

    /** The range recorded in {@code file}, or null if there is none. */
    static PbnRange read(Path file) {
        byte[] b;
        try {
            b = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "read failed: " + e.getMessage(), e);
        }
        ByteBuffer v = ByteBuffer.wrap(b);
        if (b.length != GmaFormat.RANGE_FILE_BYTES || v.getInt(0) != GmaFormat.RANGE_MAGIC_V1 || v.getInt(4) != checksum(v)) {
            throw new GcCorruptException(STORE, file, null, "not a GMA range record of format 1 (" + b.length
                    + " bytes, or a wrong magic or checksum): rebuild the GC metadata (gc-rebuild)");
        }
        try {
            return new PbnRange(v.getLong(8), v.getLong(16));
        } catch (IllegalArgumentException e) {
            throw new GcCorruptException(STORE, file, null, e.getMessage());
        }
    }

    private static void write(Path dir, PbnRange range) {
        ByteBuffer v = ByteBuffer.allocate(GmaFormat.RANGE_FILE_BYTES);
        v.putInt(0, GmaFormat.RANGE_MAGIC_V1);
        v.putLong(8, range.first());
        v.putLong(16, range.limit());
        v.putInt(4, checksum(v));
        AtomicFileReplace.write(dir, GmaFormat.RANGE_FILE, v, STORE);
    }

    private static int checksum(ByteBuffer v) {
        CRC32C crc = new CRC32C();
        crc.update(v.duplicate().clear().position(8));
        return (int) crc.getValue();
    }

    private static boolean hasChunks(Path gma) {
        try {
            return Files.exists(gma) && Files.size(gma) > 0;
        } catch (IOException e) {
            throw new GcStoreException(STORE, gma, null, "cannot read its size: " + e.getMessage(), e);
        }
    }

    private static String describe(PbnRange range) {
        return range.equals(PbnRange.STANDALONE) ? "standalone " + range : range.toString();
    }
}
