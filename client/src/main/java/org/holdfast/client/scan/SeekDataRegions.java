package org.holdfast.client.scan;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Data and holes of a regular file as the file system knows them, from Linux's
 * {@code lseek(fd, offset, SEEK_DATA)} and {@code SEEK_HOLE}, called through JNA (a maintained
 * native-access library: no JNI of our own). A sparse VM image of 16 GiB with 64 MiB written is
 * then read as 64 MiB, not 16 GiB.
 *
 * <p>Owns one read-only file descriptor of its own, used only for {@code lseek}: the reader's
 * positional reads go through its {@code FileChannel}, so the shared file offset that
 * {@code lseek} moves matters to nobody. Any error other than "no data after this offset" answers
 * "data", which only costs a read. A file system without hole support reports the whole file as
 * data (the kernel's generic answer), which is correct too.
 */
final class SeekDataRegions implements DataRegions {
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final int SEEK_DATA = 3;
    private static final int SEEK_HOLE = 4;
    private static final int ENXIO = 6;
    private static final LibC LIBC = load();

    private final int fd;
    private final long size;
    private final AtomicBoolean closed = new AtomicBoolean();
    // Offsets from which the file has no more data: answers the tail of a sparse file without a
    // system call per chunk. Only ever lowered.
    private volatile long noDataFrom = Long.MAX_VALUE;

    /** The C library calls we need; errno is read with {@link Native#getLastError()} (no exception per call). */
    interface LibC extends Library {
        int open(String path, int flags);

        long lseek(int fd, long offset, int whence);

        int close(int fd);
    }

    private SeekDataRegions(int fd, long size) {
        this.fd = fd;
        this.size = size;
    }

    private static LibC load() {
        if (!Platform.isLinux()) {
            return null;
        }
        try {
            return Native.load(Platform.C_LIBRARY_NAME, LibC.class);
        } catch (LinkageError e) {
            return null; // JNA's native part cannot load here (no writable temp dir, odd libc): read everything
        }
    }

    /** True if this platform can ask for holes at all. */
    static boolean available() {
        return LIBC != null;
    }

    /** Regions of the regular file {@code file} of {@code size} bytes, or null if they cannot be asked for. */
    static SeekDataRegions open(Path file, long size) {
        if (LIBC == null) {
            return null;
        }
        int fd = LIBC.open(file.toAbsolutePath().toString(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return null;
        }
        // One probe: a kernel or file system that refuses SEEK_DATA answers EINVAL here.
        long probe = LIBC.lseek(fd, 0, SEEK_DATA);
        if (probe < 0 && Native.getLastError() != ENXIO) {
            LIBC.close(fd);
            return null;
        }
        return new SeekDataRegions(fd, size);
    }

    @Override
    public long nextData(long offset) {
        if (offset >= size || offset >= noDataFrom) {
            return NO_MORE_DATA;
        }
        long r = LIBC.lseek(fd, Math.max(0, offset), SEEK_DATA);
        if (r >= 0) {
            return r < size ? r : NO_MORE_DATA; // the file may have grown since its size was taken
        }
        if (Native.getLastError() == ENXIO) {
            lowerNoDataFrom(offset);
            return NO_MORE_DATA;
        }
        return offset; // unknown: treat as data
    }

    private void lowerNoDataFrom(long offset) {
        synchronized (this) {
            if (offset < noDataFrom) {
                noDataFrom = offset;
            }
        }
    }

    @Override
    public long nextHole(long offset) {
        if (offset >= size) {
            return size;
        }
        long r = LIBC.lseek(fd, Math.max(0, offset), SEEK_HOLE);
        return r >= 0 ? Math.min(r, size) : size;
    }

    @Override
    public boolean findsHoles() {
        return true;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            LIBC.close(fd);
        }
    }
}
