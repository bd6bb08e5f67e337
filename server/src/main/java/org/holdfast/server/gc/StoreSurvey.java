package org.holdfast.server.gc;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GcMetadataArray;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;

/**
 * One pass over the stored blocks for statistics: every location (the blocks on disk and their
 * stored size) joined, in PBN order, with the GC metadata of its PBN (reference count, pins,
 * expiry). It tells what is live and what comes free when: a block no snapshot references any more
 * (RC 0, no pin, not freed) is freed by the first sweep after its expiry, so its record bytes are
 * "reclaimable now" if the expiry has passed and "reclaimable on that day" otherwise.
 *
 * <p>Cost: one sequential walk of the location index (48 bytes per stored block) and one read of
 * each GMA chunk that holds a stored block (128 KiB per 8191 PBNs, through the GMA's cache, under
 * each chunk's lock only while it is copied). Nothing is held between chunks, so backups and GC run
 * beside it. The GMA copy read is the chunk as last applied; updates still queued are not seen, so
 * a block freed or referenced in the last seconds may be counted in its former state.
 */
public final class StoreSurvey {
    /** Days ahead that {@link Result#expiringByDay()} lists one by one; later expiries are summed into {@code laterBytes}. */
    public static final int DAYS_AHEAD = 400;

    /**
     * What a survey found. {@code liveBlocks}: blocks with a location; {@code livePayloadBytes}: their
     * stored (compressed) payloads; {@code liveRecordBytes}: with record headers, what they occupy in
     * the data logs. {@code expired*}: unreferenced blocks whose expiry has passed, waiting for the
     * sweep. {@code expiringByDay}: record bytes of unreferenced blocks by the UTC day their expiry
     * falls on (days with nothing are absent), for the next {@link #DAYS_AHEAD} days;
     * {@code laterBytes}: beyond. {@code pinnedBytes}: unreferenced blocks kept by a hold or keep-last pin.
     * {@code byLog}: per data log id, its live and its expired record bytes (what compaction weighs).
     */
    public record Result(long measuredAtMillis, long liveBlocks, long livePayloadBytes, long liveRecordBytes,
                         long expiredBlocks, long expiredBytes, SortedMap<LocalDate, Long> expiringByDay, long laterBytes,
                         long pinnedBytes, SortedMap<Integer, LogBytes> byLog) {
        public Result {
            expiringByDay = Collections.unmodifiableSortedMap(new TreeMap<>(expiringByDay));
            byLog = Collections.unmodifiableSortedMap(new TreeMap<>(byLog));
        }
    }

    /** One data log's live record bytes, and of those the bytes of blocks the next sweep frees (expired). */
    public record LogBytes(long liveBytes, long expiredBytes) {
    }

    private final DataStore store;
    private final BoscPipeline pipeline;

    /** A survey of {@code store}'s blocks; {@code pipeline} null when there is no GC metadata (nothing is then reclaimable). */
    public StoreSurvey(DataStore store, BoscPipeline pipeline) {
        this.store = store;
        this.pipeline = pipeline;
    }

    /** Walks every stored block once; {@code now} decides what has expired. */
    public Result run(long now) {
        Walk w = new Walk(pipeline == null ? null : pipeline.gma(), now);
        store.locations().forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            w.visit(pbn, logId, storedLength);
            return true;
        });
        SortedMap<Integer, LogBytes> byLog = new TreeMap<>();
        w.byLog.forEach((id, b) -> byLog.put(id, new LogBytes(b[0], b[1])));
        return new Result(now, w.blocks, w.payload, w.records, w.expiredBlocks, w.expiredBytes, w.byDay, w.later, w.pinned, byLog);
    }

    /** The walk's state: the GC metadata of the chunk the walk is in, copied out, and the sums. */
    private static final class Walk {
        private final GcMetadataArray gma;
        private final long now;
        private final LocalDate today;
        private final int[] rc = new int[GmaFormat.PBNS_PER_CHUNK + 1];
        private final int[] pins = new int[GmaFormat.PBNS_PER_CHUNK + 1];
        private final int[] flags = new int[GmaFormat.PBNS_PER_CHUNK + 1];
        private final long[] expiry = new long[GmaFormat.PBNS_PER_CHUNK + 1];
        private long chunk = -1;
        long blocks;
        long payload;
        long records;
        long expiredBlocks;
        long expiredBytes;
        long later;
        long pinned;
        final SortedMap<LocalDate, Long> byDay = new TreeMap<>();
        /** Per log id: live record bytes, expired record bytes. */
        final java.util.Map<Integer, long[]> byLog = new java.util.HashMap<>();
        /** The entry of the log the last block lay in: PBN order is mostly log order, so one lookup per run of a log. */
        private int lastLogId = -1;
        private long[] lastLog;

        Walk(GcMetadataArray gma, long now) {
            this.gma = gma;
            this.now = now;
            this.today = LocalDate.ofInstant(Instant.ofEpochMilli(now), ZoneOffset.UTC);
        }

        void visit(long pbn, int logId, int storedLength) {
            long bytes = FormatVersions.RECORD_HEADER_BYTES + (long) storedLength;
            blocks++;
            payload += storedLength;
            records += bytes;
            if (logId != lastLogId) {
                lastLogId = logId;
                lastLog = byLog.computeIfAbsent(logId, k -> new long[2]);
            }
            long[] log = lastLog;
            log[0] += bytes;
            if (gma == null) {
                return;
            }
            if (!gma.layout().holds(pbn)) {
                return; // outside the GMA's range: no GC metadata is kept for it
            }
            long c = gma.layout().chunkOf(pbn);
            if (c != chunk) {
                copy(c);
            }
            int s = gma.layout().slotOf(pbn);
            if ((flags[s] & GmaFormat.FLAG_USED) == 0 || (flags[s] & GmaFormat.FLAG_FREED) != 0 || rc[s] > 0) {
                return; // untracked, already freed (the location goes with the sweep's batch) or referenced
            }
            if (pins[s] > 0) {
                pinned += bytes;
            } else if (expiry[s] < now) {
                expiredBlocks++;
                expiredBytes += bytes;
                log[1] += bytes;
            } else {
                LocalDate day = LocalDate.ofInstant(Instant.ofEpochMilli(expiry[s]), ZoneOffset.UTC);
                if (day.isAfter(today.plusDays(DAYS_AHEAD))) {
                    later += bytes;
                } else {
                    byDay.merge(day, bytes, Long::sum);
                }
            }
        }

        private void copy(long c) {
            chunk = c;
            ReentrantLock l = gma.lock(c);
            l.lock();
            try {
                GmaChunk g = gma.load(c);
                for (int s = 1; s <= GmaFormat.PBNS_PER_CHUNK; s++) {
                    flags[s] = g.flags(s);
                    rc[s] = g.rc(s);
                    pins[s] = g.pins(s);
                    expiry[s] = g.expiry(s);
                }
            } finally {
                l.unlock();
            }
        }
    }
}
