package org.holdfast.client.scan;

import java.nio.file.Path;

/**
 * Where a source holds data and where it has holes: ranges that were never written and read as
 * zeros. The reader skips holes without reading or hashing them; their blocks are zero blocks.
 *
 * <p>A hole is only ever a promise that the bytes read as zero, so an implementation that knows
 * nothing ({@link #wholeFile}) reports everything as data, which is always correct, only slower.
 * Offsets are bytes. Implementations answer from any thread.
 */
public interface DataRegions extends AutoCloseable {
    /** Returned by {@link #nextData} when only holes follow. */
    long NO_MORE_DATA = -1;

    /** The first byte at or after {@code offset} (below the size) that may hold data, or {@link #NO_MORE_DATA}. */
    long nextData(long offset);

    /** The first byte at or after {@code offset} that starts a hole, or the source's size if none does. */
    long nextHole(long offset);

    /** True if this knows holes at all ({@link #wholeFile} does not). */
    boolean findsHoles();

    /** Releases what the regions hold open. Idempotent. */
    @Override
    void close();

    /** Everything of a source of {@code size} bytes is data: read it all. */
    static DataRegions wholeFile(long size) {
        return new WholeFileRegions(size);
    }

    /**
     * The best the platform offers for {@code source}: {@link SeekDataRegions} for a regular file on
     * Linux, else (block devices, other systems, {@code readHoles}) {@link #wholeFile}.
     */
    static DataRegions of(Path source, long size, boolean blockDevice, boolean readHoles) {
        if (readHoles || blockDevice) {
            return wholeFile(size);
        }
        DataRegions seek = SeekDataRegions.open(source, size);
        return seek != null ? seek : wholeFile(size);
    }
}
