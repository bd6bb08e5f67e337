package org.holdfast.server.ingest;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The backups in progress on the ingest port, for the REST API and the console: one entry from
 * BACKUP_BEGIN until the session ends (committed, aborted or failed). Each entry is written by its
 * connection's lane only (single writer, volatile fields) and read by anyone; an update costs a few
 * stores per frame, never per block, and nothing is kept once the backup ends.
 */
public final class RunningBackups {
    private final Map<Long, Progress> running = new ConcurrentHashMap<>();
    private final LongSupplier clockMillis;

    /** Times taken from {@code clockMillis} (the server clock). */
    public RunningBackups(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
    }

    /**
     * One backup as of now. {@code principal}: who sends it ({@code token:<id>(<name>)});
     * {@code agent}: the agent's name from its HELLO; {@code positionBytes}: how far into the volume
     * the agent's entries have come (the agent reads in order); {@code bytesReceived}: block payload
     * bytes uploaded (compressed as sent); rates are since the start.
     */
    public record Backup(long sessionId, String volume, String principal, String agent, String remoteAddress, int blockSize,
                         long volumeBytes, long parentSequence, long startedAtMillis, long entriesReceived, long blocksReceived,
                         long bytesReceived, long positionBytes, double bytesPerSecond, double positionBytesPerSecond) {
    }

    /** Registers a backup that has just begun; the caller reports to the answer and ends it with {@link #end}. */
    Progress begin(long sessionId, String volume, String principal, String agent, String remoteAddress, int blockSize,
                   long volumeBytes, long parentSequence) {
        Progress p = new Progress(sessionId, volume, principal, agent, remoteAddress, blockSize, volumeBytes, parentSequence,
                clockMillis.getAsLong());
        running.put(sessionId, p);
        return p;
    }

    /** Forgets the backup of session {@code sessionId} (idempotent). */
    void end(long sessionId) {
        running.remove(sessionId);
    }

    /** The backups in progress, oldest first. */
    public List<Backup> list() {
        long now = clockMillis.getAsLong();
        return running.values().stream().map(p -> p.at(now)).sorted(Comparator.comparingLong(Backup::startedAtMillis)
                .thenComparingLong(Backup::sessionId)).toList();
    }

    /** How many backups are in progress. */
    public int count() {
        return running.size();
    }

    /** One backup's counters; written by its connection's lane only. */
    static final class Progress {
        private final long sessionId;
        private final String volume;
        private final String principal;
        private final String agent;
        private final String remoteAddress;
        private final int blockSize;
        private final long volumeBytes;
        private final long parentSequence;
        private final long startedAtMillis;
        private volatile long entries;
        private volatile long blocks;
        private volatile long bytes;
        private volatile long endLbn;

        private Progress(long sessionId, String volume, String principal, String agent, String remoteAddress, int blockSize,
                         long volumeBytes, long parentSequence, long startedAtMillis) {
            this.sessionId = sessionId;
            this.volume = volume;
            this.principal = principal;
            this.agent = agent;
            this.remoteAddress = remoteAddress;
            this.blockSize = blockSize;
            this.volumeBytes = volumeBytes;
            this.parentSequence = parentSequence;
            this.startedAtMillis = startedAtMillis;
        }

        /** An ENTRIES frame of {@code count} entries ending before LBN {@code endLbn}. */
        void entries(long endLbn, int count) {
            entries += count;
            if (endLbn > this.endLbn) {
                this.endLbn = endLbn;
            }
        }

        /** A BLOCKS frame of {@code count} blocks with {@code payloadBytes}. */
        void blocks(int count, long payloadBytes) {
            blocks += count;
            bytes += payloadBytes;
        }

        Backup at(long now) {
            double seconds = Math.max(0.001, (now - startedAtMillis) / 1000.0);
            long b = bytes;
            long position = Math.min(volumeBytes, endLbn * blockSize);
            return new Backup(sessionId, volume, principal, agent, remoteAddress, blockSize, volumeBytes, parentSequence,
                    startedAtMillis, entries, blocks, b, position, b / seconds, position / seconds);
        }
    }
}
