package org.holdfast.server.store;

import java.io.IOException;

/**
 * The free space the data store keeps back: ingest may not take the disk below
 * {@code reserveBytes}; the rest of the server (GC logs, catalog, compaction) may, which is what
 * lets a GC run free space on a full disk.
 *
 * <p>Checked before every append, cheaply: the usable space from the last statvfs is cached and
 * every byte appended since is charged against it; the file system is asked again when the cached
 * margin above the reserve drops under {@link #RESTAT_MARGIN}, or after {@link #RESTAT_NANOS}
 * (others write and delete on the same disk). So the reserve is never overrun by more than what
 * other writers took within that time.
 *
 * <p>Thread-safe (one monitor; the data store calls it under its append lock).
 */
public final class SpaceReserve {
    /** Below this margin above the reserve the file system is asked before every append. */
    static final long RESTAT_MARGIN = 64L << 20;
    /** A cached figure older than this is asked again. */
    static final long RESTAT_NANOS = 1_000_000_000L;

    private final DiskSpace disk;
    private final long reserveBytes;
    private final String dir;
    /** Bytes appended but still in a write buffer: the file system does not count them yet. */
    private volatile java.util.function.LongSupplier unwritten = () -> 0;
    private long usable = -1;
    private long charged;
    private long statNanos;

    public SpaceReserve(DiskSpace disk, long reserveBytes, String dir) {
        this.disk = disk;
        this.reserveBytes = reserveBytes;
        this.dir = dir;
    }

    /** Tells the reserve how many appended bytes the file system cannot see yet (the data log's write buffer). */
    void unwritten(java.util.function.LongSupplier bytes) {
        this.unwritten = bytes;
    }

    /** The configured reserve ({@code holdfast.store.min-free-space}). */
    public long reserveBytes() {
        return reserveBytes;
    }

    public DiskSpace disk() {
        return disk;
    }

    /**
     * Charges {@code bytes} about to be written by ingest, or refuses with
     * {@link StorageFullException} (charging nothing) if they would take the disk below the reserve.
     */
    public synchronized void charge(long bytes) {
        long now = System.nanoTime();
        if (usable < 0 || now - statNanos > RESTAT_NANOS || usable - charged - bytes < reserveBytes + RESTAT_MARGIN) {
            restat(now);
        }
        long left = usable - charged - bytes;
        if (left < reserveBytes) {
            throw full(bytes);
        }
        charged += bytes;
    }

    /** Asks the file system now and refuses like {@link #charge} if less than {@code bytes} above the reserve is free. */
    public synchronized void require(long bytes) {
        restat(System.nanoTime());
        if (usable - bytes < reserveBytes) {
            throw full(bytes);
        }
    }

    /** Usable bytes above the reserve at the last look (may be negative). */
    public synchronized long headroom() {
        if (usable < 0) {
            restat(System.nanoTime());
        }
        return usable - charged - reserveBytes;
    }

    /**
     * Bytes GC may still write before the disk is down to its floor, a quarter of the reserve (asks
     * the file system now). GC and compaction may use the reserve, which ingest may not, but not all
     * of it: the catalog needs the last part to record what GC did.
     */
    public synchronized long gcRoom() {
        restat(System.nanoTime());
        return usable - reserveBytes / 4;
    }

    /** Forgets the cached figure: space was freed or taken outside the store's appends. */
    public synchronized void invalidate() {
        usable = -1;
    }

    private void restat(long now) {
        try {
            usable = disk.usableBytes() - unwritten.getAsLong();
        } catch (IOException e) {
            throw StoreException.translate("data-store", dir, null, e);
        }
        charged = 0;
        statNanos = now;
    }

    private StorageFullException full(long bytes) {
        long free = usable - charged;
        // at least what a backup needs to start (one write buffer); the rest of a backup needs more
        long missing = Math.max(reserveBytes + bytes - free, 0) + DataStore.BEGIN_HEADROOM;
        return new StorageFullException("data-store", dir, null,
                "storage full: " + mib(free) + " free on the data disk, the reserve (holdfast.store.min-free-space) is "
                        + mib(reserveBytes) + "; free at least " + mib(missing) + " more, plus what the rest of the backup needs: run reclaim-now"
                        + " (POST /api/v1/gc/reclaim), which frees what failed backups left, after deleting snapshots or volumes"
                        + " you no longer need; or grow the disk", null, free, reserveBytes);
    }

    static String mib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
    }
}
