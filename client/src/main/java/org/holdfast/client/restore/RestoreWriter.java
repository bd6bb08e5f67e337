package org.holdfast.client.restore;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.client.GuardedReplace;
import org.holdfast.client.LeftoverTempFiles;
import org.holdfast.client.TempFileGuard;
import org.holdfast.client.scan.StateFile;

/**
 * Writes a restored volume, block by block in LBN order, coalescing consecutive blocks into large
 * writes.
 *
 * <p>A regular-file target is written to a temporary file beside it; zero blocks are skipped and
 * become holes, the final length is set exactly (the last block may be partial), and
 * {@link #finish} fsyncs and renames it over the target, so the target is either the old file or
 * the complete restore, never a mix. A block-device target is written in place, zero blocks as
 * real zeros (a device has no holes and may hold old data), and must be at least as large as the
 * volume.
 *
 * <p>Two ways in: {@link #write}/{@link #zero} take blocks one by one in LBN order (one thread);
 * {@link #writeRun} takes a run of decoded blocks at any position and may be called from several
 * threads at once (positional writes, no shared buffer), so restore workers write their pieces
 * in whatever order they finish. {@link #finish} and {@link #close} run after all writers stopped.
 *
 * <p>A file's runs go to the disk with O_DIRECT where the file system allows it ({@link DirectWrites}):
 * the page cache copy was the restore's most expensive stage. What is written buffered (the
 * one-by-one path, a partial last block, everything when O_DIRECT is off) is flushed in the background.
 */
public final class RestoreWriter implements AutoCloseable {
    private static final int WRITE_BUFFER = 8 << 20;
    /** The temporary file's name ends so: {@code .<target name>.<random>.holdfast-restore}. */
    public static final String TEMP_SUFFIX = ".holdfast-restore";
    static final long WRITEBACK_BYTES = 64L << 20;

    private final Path target;
    private final Path temp; // null for a device
    private final RandomAccessFile file; // null for a device
    private final FileChannel ch;
    // O_DIRECT channel on the temporary file for whole blocks of writeRun (DirectWrites); null: buffered only
    private final FileChannel direct;
    private volatile boolean directFailed;
    private final long volumeBytes;
    private final int blockSize;
    private ByteBuffer pending; // allocated by the first write(): writeRun needs none
    private final byte[] zeros;
    private long pendingLbn = -1;
    private long nextLbn;
    private volatile boolean finished;
    private Writeback writeback; // started by the first writeRun
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder bufferedBytes = new LongAdder(); // what the writeback thread has to flush
    private final TempFileGuard cleanup; // null for a device

    private RestoreWriter(Path target, TempFileGuard guard, RandomAccessFile file, FileChannel ch, FileChannel direct,
                          long volumeBytes, int blockSize) {
        this.target = target;
        this.temp = guard == null ? null : guard.path();
        this.file = file;
        this.ch = ch;
        this.direct = direct;
        this.volumeBytes = volumeBytes;
        this.blockSize = blockSize;
        this.zeros = temp == null ? new byte[blockSize] : null;
        // Ctrl-C (or SIGTERM) during a restore: the half-written temporary file goes; the target was never touched
        this.cleanup = guard;
    }

    private void removeCleanup() {
        if (cleanup != null) {
            cleanup.release();
        }
    }

    /**
     * Refuses a target that holds something unless {@code force}: an existing non-empty regular
     * file or any block device (a usage error naming it). A missing or empty file passes.
     */
    public static void checkOverwrite(Path target, boolean force) {
        if (force || !Files.exists(target) || Files.isDirectory(target)) {
            return; // a directory is refused by open(), with or without --force
        }
        if (!Files.isRegularFile(target)) {
            throw new AgentException(ExitCode.USAGE, "target " + target + " is a device; the restore would overwrite"
                    + " everything on it", "check that it is the right one and not in use (lsblk), then pass --force");
        }
        long size;
        try {
            size = Files.size(target);
        } catch (IOException e) {
            throw IoReasons.localIo("cannot read the size of target", target, e, "check the path");
        }
        if (size > 0) {
            throw new AgentException(ExitCode.USAGE, "target " + target + " exists and is not empty (" + size
                    + " bytes); the restore would replace it", "pass --force to overwrite it, or name a new file with --target");
        }
    }

    /**
     * Opens {@code target} for a volume of {@code volumeBytes} in blocks of {@code blockSize},
     * after {@link #checkOverwrite}. A new file gets mode 0600 (a volume holds whatever its
     * owner's disk held); a file that exists keeps its mode and, where this user may set them,
     * its owner and group.
     */
    public static RestoreWriter open(Path target, long volumeBytes, int blockSize, boolean force) {
        checkOverwrite(target, force);
        try {
            if (Files.exists(target) && !Files.isRegularFile(target) && !Files.isDirectory(target)) {
                Path real = target.toRealPath();
                long size = deviceSize(real);
                if (size < volumeBytes) {
                    throw new AgentException(ExitCode.USAGE, "target device " + target + " has " + size
                            + " bytes, the snapshot needs " + volumeBytes, "restore to a larger device or to a file");
                }
                FileChannel ch = FileChannel.open(real, StandardOpenOption.WRITE);
                return new RestoreWriter(target, null, null, ch, null, volumeBytes, blockSize);
            }
            if (Files.isDirectory(target)) {
                throw new AgentException(ExitCode.USAGE, "target " + target + " is a directory", "name a file or a block device");
            }
            Path dir = target.toAbsolutePath().getParent();
            if (dir == null || !Files.isDirectory(dir)) {
                throw new AgentException(ExitCode.USAGE, "the directory of target " + target + " does not exist", "create it first");
            }
            TempFileGuard guard = TempFileGuard.create(dir, tempPrefix(target), TEMP_SUFFIX,
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            RandomAccessFile raf = null;
            try {
                keepAttributes(target, guard.path());
                raf = new RandomAccessFile(guard.path().toFile(), "rw");
                guard.lock(raf.getChannel()); // held until finish renamed the file or close deleted it (LeftoverTempFiles)
                return new RestoreWriter(target, guard, raf, raf.getChannel(), DirectWrites.open(guard.path(), blockSize),
                        volumeBytes, blockSize);
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(guard.path());
                if (raf != null) {
                    raf.close();
                }
                guard.release();
                throw e;
            }
        } catch (IOException e) {
            throw IoReasons.localIo("cannot open target", target, e, "check the path, free space and permissions");
        }
    }

    /**
     * Removes the temporary files that restores to {@code target} killed by SIGKILL left beside it
     * (never a live restore's: {@link LeftoverTempFiles}), one notice per file. A device target has none.
     */
    public static List<LeftoverTempFiles.Removed> removeLeftovers(Path target, Consumer<String> notices) {
        Path dir = target.toAbsolutePath().getParent();
        if (dir == null || (Files.exists(target) && !Files.isRegularFile(target))) {
            return List.of();
        }
        return LeftoverTempFiles.remove(dir, tempPrefix(target), TEMP_SUFFIX, "a restore to " + target, notices);
    }

    private static String tempPrefix(Path target) {
        return "." + target.getFileName() + ".";
    }

    /** Gives {@code temp} the mode (and owner and group, where allowed) of an existing {@code target}. */
    private static void keepAttributes(Path target, Path temp) throws IOException {
        if (!Files.isRegularFile(target)) {
            return;
        }
        PosixFileAttributes old = Files.readAttributes(target, PosixFileAttributes.class);
        Files.setPosixFilePermissions(temp, old.permissions());
        PosixFileAttributeView view = Files.getFileAttributeView(temp, PosixFileAttributeView.class);
        try {
            if (!old.owner().equals(Files.getOwner(temp))) {
                view.setOwner(old.owner());
            }
            if (!old.group().equals(view.readAttributes().group())) {
                view.setGroup(old.group());
            }
        } catch (IOException notAllowed) {
            // only root may give a file away; the mode is kept, the file belongs to this user
        }
    }

    private static long deviceSize(Path real) throws IOException {
        Path sys = Path.of("/sys/class/block", real.getFileName().toString(), "size");
        if (!Files.exists(sys)) {
            throw new IOException("not a regular file and not a block device this agent can size");
        }
        return Long.parseLong(Files.readString(sys).strip()) * 512L;
    }

    /** True while {@link #writeRun} writes whole blocks with O_DIRECT (see {@link DirectWrites}). */
    boolean writesDirect() {
        return direct != null && !directFailed;
    }

    /**
     * A direct buffer of {@code bytes} for {@link #writeRun}, aligned so that O_DIRECT can write from
     * it (a buffer from elsewhere is written through the page cache).
     */
    static ByteBuffer runBuffer(int bytes) {
        return DirectWrites.allocate(bytes);
    }

    /** True if the target is a regular file (written through a temporary file). */
    public boolean isFile() {
        return temp != null;
    }

    /** Writes block {@code lbn} from {@code blockSize} bytes of {@code src} at {@code off}. Blocks come in LBN order. */
    public void write(long lbn, byte[] src, int off) {
        checkOrder(lbn);
        append(lbn, src, off);
    }

    /** Block {@code lbn} is all zeros. */
    public void zero(long lbn) {
        checkOrder(lbn);
        if (temp != null) {
            flush(); // a hole: nothing to write
        } else {
            append(lbn, zeros, 0);
        }
    }

    private void checkOrder(long lbn) {
        if (lbn != nextLbn) {
            throw new IllegalStateException("block " + lbn + " out of order, expected " + nextLbn);
        }
        nextLbn++;
    }

    private void append(long lbn, byte[] src, int off) {
        if (pending == null) {
            pending = ByteBuffer.allocateDirect(Math.max(blockSize, WRITE_BUFFER / blockSize * blockSize));
        }
        if (pending.position() > 0 && !pending.hasRemaining()) {
            flush();
        }
        if (pending.position() == 0) {
            pendingLbn = lbn;
        }
        pending.put(src, off, blockSize);
    }

    private void flush() {
        if (pending == null || pending.position() == 0) {
            return;
        }
        long pos = pendingLbn * blockSize;
        pending.flip();
        // The last block of a volume may be partial: never write past the volume's end.
        long end = Math.min(volumeBytes, pos + pending.remaining());
        pending.limit((int) (end - pos));
        try {
            writeFully(ch, pending, pos);
        } catch (IOException e) {
            throw IoReasons.localIo("writing", target, e, "check free space and the target device");
        }
        pending.clear();
    }

    /**
     * Writes {@code bytes} bytes of decoded blocks starting at block {@code lbn} from {@code src}
     * (its position to its limit; the position advances). Never writes past the volume's end (the
     * last block may be partial). Thread-safe against other {@code writeRun} calls.
     */
    public void writeRun(long lbn, ByteBuffer src) {
        long pos = lbn * blockSize;
        if (lbn < 0 || pos >= volumeBytes) {
            throw new IllegalArgumentException("block " + lbn + " is outside a volume of " + volumeBytes + " bytes");
        }
        long end = Math.min(volumeBytes, pos + src.remaining());
        src.limit(src.position() + (int) (end - pos));
        if (writesDirect()) {
            pos = writeDirect(src, pos);
            if (!src.hasRemaining()) {
                return;
            }
        }
        int from = src.position();
        try {
            writeFully(ch, src, pos);
        } catch (IOException e) {
            throw IoReasons.localIo("writing", target, e, "check free space and the target device");
        }
        bufferedBytes.add(src.position() - from);
        Writeback wb = writeback;
        if (wb == null) {
            synchronized (this) {
                if (writeback == null && !finished) {
                    writeback = new Writeback();
                }
                wb = writeback;
            }
        }
        if (wb != null) {
            wb.written(bufferedBytes.sum());
        }
    }

    /**
     * Writes the whole blocks of {@code src} at {@code pos} with O_DIRECT and returns the position
     * after them; a partial last block is left in {@code src} for the buffered channel. A direct
     * write that fails (a misaligned buffer, a file system that takes O_DIRECT at open but not at
     * write) turns O_DIRECT off for the rest of the restore and the caller writes the rest buffered:
     * a real failure (no space) then fails there and is reported as before.
     */
    private long writeDirect(ByteBuffer src, long pos) {
        int limit = src.limit();
        int from = src.position();
        src.limit(from + src.remaining() / blockSize * blockSize);
        try {
            writeFully(direct, src, pos);
        } catch (IOException e) {
            directFailed = true;
        } finally {
            src.limit(limit);
        }
        return pos + (src.position() - from);
    }

    /**
     * Writes all of {@code src} (position to limit) at file position {@code pos} of {@code channel},
     * counting the bytes written; if it throws, {@code src}'s position says how far it got.
     */
    private void writeFully(FileChannel channel, ByteBuffer src, long pos) throws IOException {
        long base = pos - src.position(); // file position of src's index 0
        while (src.hasRemaining()) {
            bytesWritten.add(channel.write(src, base + src.position()));
        }
    }

    /**
     * Flushes written data to the disk in the background while the restore goes on (fdatasync
     * every {@value #WRITEBACK_BYTES} bytes), so the final fsync finds little left to write; the
     * kernel on its own would hold gigabytes of dirty pages until then. A failure is kept and
     * reported by {@link #finish} (an fsync error is reported only once per file).
     */
    private final class Writeback implements Runnable {
        private final Thread thread = new Thread(this, "holdfast-restore-writeback");
        private long written;
        private long synced;
        private boolean stop;
        private IOException failure;

        Writeback() {
            thread.setDaemon(true);
            thread.start();
        }

        synchronized void written(long total) {
            if (total > written) {
                written = total;
                if (written - synced >= WRITEBACK_BYTES) {
                    notifyAll();
                }
            }
        }

        @Override
        public void run() {
            while (true) {
                long upTo;
                synchronized (this) {
                    while (!stop && written - synced < WRITEBACK_BYTES) {
                        try {
                            wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    if (stop) {
                        return;
                    }
                    upTo = written;
                }
                try {
                    ch.force(false);
                } catch (IOException e) {
                    synchronized (this) {
                        failure = e;
                        stop = true;
                    }
                    return;
                }
                synchronized (this) {
                    synced = upTo;
                }
            }
        }

        /** Stops the thread and waits for a running flush; returns its failure, if any. */
        IOException stop() {
            synchronized (this) {
                stop = true;
                notifyAll();
            }
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (this) {
                return failure;
            }
        }
    }

    private IOException stopWriteback() {
        Writeback wb;
        synchronized (this) {
            wb = writeback;
            writeback = null;
        }
        return wb == null ? null : wb.stop();
    }

    private void closeDirect() {
        if (direct == null) {
            return;
        }
        try {
            direct.close(); // its writes are in the file already; the fsync through ch makes them durable
        } catch (IOException ignored) {
            // nothing is buffered in an O_DIRECT channel: closing cannot lose data
        }
    }

    /** True if zero blocks must be written as zeros (a device); a regular file leaves them as holes. */
    public boolean writesZeros() {
        return temp == null;
    }

    /** Bytes written so far (holes not counted). */
    public long bytesWritten() {
        return bytesWritten.sum();
    }

    /** Flushes, sets the exact length, fsyncs and (for a file) renames over the target. */
    public void finish() {
        flush();
        closeDirect();
        IOException background = stopWriteback();
        if (background != null) {
            throw IoReasons.localIo("flushing to disk", target, background, "check the disk and the target");
        }
        try {
            if (temp != null) {
                file.setLength(volumeBytes);
                ch.force(true);
                // renamed before the file closes: closing drops the lock that keeps other runs' hands off
                try {
                    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
                }
                file.close();
                GuardedReplace.fsyncDirectory(target.toAbsolutePath().getParent());
            } else {
                ch.force(true);
                ch.close();
            }
            finished = true;
            removeCleanup();
        } catch (IOException e) {
            throw IoReasons.localIo("finishing", target, e, "check free space and the target");
        }
    }

    /** Without {@link #finish}: closes and deletes the temporary file (the target is untouched). */
    @Override
    public void close() {
        if (finished) {
            return;
        }
        finished = true;
        stopWriteback();
        closeDirect();
        try {
            if (temp != null) {
                Files.deleteIfExists(temp); // still locked: no other run looks at it meanwhile
            }
        } catch (IOException ignored) {
            // already failing; a leftover temp file never has the target's name, and a later restore removes it
        }
        try {
            ch.close();
            if (file != null) {
                file.close();
            }
        } catch (IOException ignored) {
            // already failing
        }
        removeCleanup();
    }
}
