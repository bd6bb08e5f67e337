package org.holdfast.gc.bosc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.holdfast.gc.AtomicFileReplace;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;

/**
 * The durable BOSC checkpoint: the oldest uncommitted LSN (replay starts there) and the highest
 * operation id whose whole group lies below it.
 *
 * <pre>
 * file "checkpoint", 28 bytes, big-endian:
 *   [0..3] magic+version 0x48434B01  [4..11] LSN  [12..19] operation id  [20..23] reserved
 *   [24..27] CRC32C of bytes 0..23
 * </pre>
 * Written to a temporary file, forced, then renamed over the old one: a crash leaves either.
 */
record Checkpoint(long lsn, long opId) {
    static final int MAGIC_V1 = 0x48434B01;
    private static final String STORE = "gma-checkpoint";

    static Checkpoint read(Path dir) {
        Path p = dir.resolve("checkpoint");
        if (!Files.exists(p)) {
            return new Checkpoint(1, 0);
        }
        try {
            byte[] b = Files.readAllBytes(p);
            ByteBuffer bb = ByteBuffer.wrap(b);
            CRC32C c = new CRC32C();
            if (b.length != 28 || bb.getInt(0) != MAGIC_V1) {
                throw new GcCorruptException(STORE, p, null, "bad checkpoint header");
            }
            c.update(b, 0, 24);
            if (bb.getInt(24) != (int) c.getValue()) {
                throw new GcCorruptException(STORE, p, null, "checkpoint checksum mismatch");
            }
            return new Checkpoint(bb.getLong(4), bb.getLong(12));
        } catch (IOException e) {
            throw new GcStoreException(STORE, p, null, "cannot read: " + e.getMessage(), e);
        }
    }

    void write(Path dir) {
        ByteBuffer bb = ByteBuffer.allocate(28);
        bb.putInt(MAGIC_V1).putLong(lsn).putLong(opId).putInt(0);
        CRC32C c = new CRC32C();
        c.update(bb.array(), 0, 24);
        bb.putInt((int) c.getValue());
        bb.flip();
        AtomicFileReplace.write(dir, "checkpoint", bb, STORE);
    }
}
