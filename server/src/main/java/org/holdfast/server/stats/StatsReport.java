package org.holdfast.server.stats;

import java.time.LocalDate;
import java.util.List;

/**
 * Statistics at one moment, in total and per volume. The stored and reclaimable figures come from
 * the latest {@link org.holdfast.server.gc.StoreSurvey} (taken at {@code surveyedAtMillis}); the
 * rest is read when the report is made ({@code atMillis}).
 *
 * <p>Definitions. {@code logicalBytes}: the sum over retained snapshots of their size (what restoring
 * each would produce); {@code newestLogicalBytes}: the same over each volume's newest snapshot only.
 * {@code stored.payloadBytes}: stored (compressed) bytes of every live block; {@code dataLogBytes}:
 * the data logs' size on disk (live records, their headers, and dead records compaction has not yet
 * removed). {@code compressionRatio}: raw / stored bytes of the blocks the retained snapshots added
 * (their own ingest figures: new blocks × block size over stored bytes); {@code dedupRatio}:
 * logical bytes / raw bytes of the live blocks (stored payload × compression ratio);
 * {@code reductionRatio}: logical / stored payload bytes (dedup × compression). Each ratio is 1 when
 * there is nothing to divide.
 */
public record StatsReport(long atMillis, long surveyedAtMillis, Capacity capacity, Stored stored, Logical logical,
                          double dedupRatio, double compressionRatio, double reductionRatio, Reclaimable reclaimable,
                          Transfers transfers, List<Volume> volumes) {

    /** What the store holds: live blocks, their stored payload and record bytes, and the data logs' size on disk. */
    public record Stored(long blocks, long payloadBytes, long recordBytes, long dataLogBytes) {
    }

    /** Bytes protected: over every retained snapshot, and over each volume's newest one. */
    public record Logical(long volumes, long snapshots, long logicalBytes, long newestLogicalBytes) {
    }

    /**
     * Bytes that come free. {@code nowBytes}: what the next GC run gives back to the file system,
     * the dead and expired record bytes of the data logs its compaction rewrites (those whose live
     * share after the sweep is below the compaction threshold, the active log included);
     * {@code compactableBytes}: of those, the records already dead. {@code expiredBytes}: unreferenced
     * blocks past their expiry, freed by the next sweep wherever they lie (in a mostly live log their
     * bytes stay until more of it dies). {@code byDate}: unreferenced blocks by the UTC day their expiry
     * falls on; {@code laterBytes}: past the listed days; {@code pinnedBytes}: unreferenced blocks a
     * hold or keep-last pin keeps (free only once released).
     */
    public record Reclaimable(long nowBytes, long expiredBytes, long compactableBytes, List<DateBytes> byDate,
                              long laterBytes, long pinnedBytes) {
    }

    /** Bytes that come free on {@code date}, and on or before it. */
    public record DateBytes(LocalDate date, long bytes, long cumulativeBytes) {
    }

    /** Bytes backed up and restored since the server started, and per second over the last {@code windowSeconds}. */
    public record Transfers(long bytesIngested, long bytesRestored, double ingestBytesPerSecond, double restoreBytesPerSecond,
                            int windowSeconds) {
    }

    /**
     * One volume: retained snapshots, their logical bytes, the newest one's, the stored bytes its
     * retained backups added, its compression ratio, when it was last backed up, and its recent rates.
     */
    public record Volume(String name, long snapshots, long logicalBytes, long newestLogicalBytes, long storedBytesAdded,
                         double compressionRatio, Long lastBackupAtMillis, double ingestBytesPerSecond,
                         double restoreBytesPerSecond) {
    }
}
