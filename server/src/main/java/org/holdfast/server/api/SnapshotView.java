package org.holdfast.server.api;

import org.holdfast.server.verify.DamageReport;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.gc.RetentionLocks;

/**
 * A snapshot in the API. {@code id} is "volume@sequence", the one snapshot id format (the agent
 * prints and takes it too). {@code createdAt} and {@code expiresAt} are ISO-8601 ({@code expiresAt}
 * null: no expiry known, kept until deleted). {@code held} is true under a hold or retention lock;
 * {@code lockMode} ({@code governance} or {@code compliance}), {@code lockUntil} (ISO-8601, null for
 * none) and {@code lockedBy} are null when it is not. {@code keptBy} names the policy rule that keeps
 * the snapshot; null until rule explanation exists. {@code consistency} is {@code application} (a pre-backup hook
 * ran and succeeded), {@code crash} (read live), or {@code unknown} (an older agent, or a snapshot stored
 * before the server recorded it).
 */
public record SnapshotView(String id, String volume, long sequence, long createdAtMillis, long volumeBytes, int blockSize,
                           long logicalBytes, long changedBlocks, long sentBlocks, long newBlocks, long storedBytes,
                           @Schema(allowableValues = {"application", "crash", "unknown"},
                                   description = "application: a pre-backup hook ran and succeeded; crash: read live; unknown: not said")
                           String consistency,
                           String lockMode, String lockUntil, String createdAt, String expiresAt, boolean held, String lockedBy,
                           String keptBy, DamageReport.SnapshotVerification verification) {
    static SnapshotView of(SnapshotRecord s, RetentionLocks.Lock lock, Long expiryMillis, String keptBy) {
        return new SnapshotView(s.id().toString(), s.volume().name(), s.sequence(), s.createdAtMillis(), s.volumeBytes(),
                s.blockSize(), s.logicalBytes(), s.changedBlocks(), s.sentBlocks(), s.newBlocks(), s.storedBytes(),
                s.consistency().wireName(), lock == null ? null : lock.mode().wireName(),
                lock == null || lock.untilMillis() == null ? null : Instant.ofEpochMilli(lock.untilMillis()).toString(),
                Instant.ofEpochMilli(s.createdAtMillis()).toString(), iso(expiryMillis), lock != null,
                lock == null ? null : lock.placedBy(), keptBy, null);
    }

    /** The same view with the snapshot's verification (last verified, ok or the damaged blocks). */
    SnapshotView withVerification(DamageReport.SnapshotVerification v) {
        return new SnapshotView(id, volume, sequence, createdAtMillis, volumeBytes, blockSize, logicalBytes, changedBlocks, sentBlocks,
                newBlocks, storedBytes, consistency, lockMode, lockUntil, createdAt, expiresAt, held, lockedBy, keptBy, v);
    }

    /** ISO-8601, or null for none (unknown, or {@code Long.MAX_VALUE}: never expires by itself). */
    static String iso(Long millis) {
        if (millis == null || millis == Long.MAX_VALUE) {
            return null;
        }
        try {
            return Instant.ofEpochMilli(millis).toString();
        } catch (java.time.DateTimeException e) {
            return null; // beyond Instant's range: as good as never
        }
    }
}
