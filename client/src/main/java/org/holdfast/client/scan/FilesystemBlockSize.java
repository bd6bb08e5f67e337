package org.holdfast.client.scan;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The block size of an ext2/3/4 file system that starts at the beginning of a source (a file
 * system image or a partition), read from its superblock: dedup matches whole volume blocks, so a
 * file system whose blocks are smaller than the volume's places copies of a file out of phase with
 * the original, and they are stored again (mke2fs picks 1 KiB blocks below 512 MiB).
 */
public final class FilesystemBlockSize {
    private static final int SUPERBLOCK = 1024;
    private static final int S_LOG_BLOCK_SIZE = 24;
    private static final int S_MAGIC = 56;
    private static final int EXT_MAGIC = 0xEF53;

    private FilesystemBlockSize() {
    }

    /** The ext file system's block size in bytes, or 0 if the source does not start with one (or cannot be read). */
    public static int ext(Path source) {
        ByteBuffer b = ByteBuffer.allocate(SUPERBLOCK).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel ch = FileChannel.open(source, StandardOpenOption.READ)) {
            while (b.hasRemaining() && ch.read(b, SUPERBLOCK + b.position()) > 0) {
                // read the superblock whole
            }
        } catch (IOException | UnsupportedOperationException e) {
            return 0; // a hint only: the backup itself reports a source it cannot read
        }
        if (b.hasRemaining() || (b.getShort(S_MAGIC) & 0xffff) != EXT_MAGIC) {
            return 0;
        }
        int log = b.getInt(S_LOG_BLOCK_SIZE);
        return log >= 0 && log <= 6 ? SUPERBLOCK << log : 0; // ext block sizes are 1 KiB to 64 KiB
    }
}
