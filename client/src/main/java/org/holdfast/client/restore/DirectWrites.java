package org.holdfast.client.restore;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes that bypass the page cache (O_DIRECT) for a restore's temporary file.
 *
 * <p>Why: copying a restored volume into the page cache, then writing it back, cost the agent more
 * CPU than any other stage of a restore (1.2 to 2.3 CPU-s per GiB in the kernel on the 2-core test
 * machine, against 0.2 with O_DIRECT). O_DIRECT needs the buffer's address, the file position and the
 * length aligned to the file system's block: run buffers come from {@link #allocate} (aligned to
 * {@value #ALIGN} bytes), positions and lengths are whole restore blocks, and a partial last block of
 * the volume goes through the ordinary channel. A file system that refuses O_DIRECT (tmpfs), a
 * block size that is not whole 4 KiB pages ({@link #suits}), or the system property
 * {@value #PROPERTY}{@code =false} leaves every write buffered, as before.
 */
final class DirectWrites {
    /** Alignment of run buffers, and the largest file-system block O_DIRECT is used with. */
    static final int ALIGN = 4096;
    /** {@code -Dholdfast.restore.direct=false} turns O_DIRECT off (to compare, or for a file system that misbehaves). */
    static final String PROPERTY = "holdfast.restore.direct";

    private DirectWrites() {
    }

    /**
     * A second, O_DIRECT channel on {@code file} for writes of whole {@code blockSize} blocks, or null
     * when O_DIRECT is off, unsupported here or unsuitable for the block size.
     */
    static FileChannel open(Path file, int blockSize) {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) {
            return null;
        }
        try {
            if (!suits(Files.getFileStore(file).getBlockSize(), blockSize)) {
                return null;
            }
            return FileChannel.open(file, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null; // e.g. EINVAL on tmpfs: buffered writes work everywhere
        }
    }

    /**
     * True if O_DIRECT suits blocks of {@code blockSize} on a file system of {@code fsBlock}-byte
     * blocks: the file system's block divides {@value #ALIGN}, and a restore block is whole 4 KiB
     * pages. Why whole pages: the partial last block (and everything after a failed direct write)
     * goes through the page cache, and a cached page that also holds bytes written directly by
     * another thread at the same time can be left stale (the kernel's "collision with buffered
     * I/O"); 1 or 2 KiB blocks on a file system of 1 KiB blocks would share pages.
     */
    static boolean suits(long fsBlock, int blockSize) {
        return fsBlock > 0 && ALIGN % fsBlock == 0 && blockSize % ALIGN == 0;
    }

    /** A direct buffer of {@code bytes} whose address is aligned for O_DIRECT. */
    static ByteBuffer allocate(int bytes) {
        int whole = Math.addExact(bytes, ALIGN - 1) / ALIGN * ALIGN; // alignedSlice keeps whole aligned pages only
        return ByteBuffer.allocateDirect(whole + ALIGN).alignedSlice(ALIGN).limit(bytes).slice();
    }
}
