package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.SealedDigests;
import org.holdfast.server.store.WorkerKeys;

/**
 * What an archiving worker's DATA_SYNCED (cluster version 7), and its SEALED_LOGS between syncs (version 8,
 * {@link SealedLogPush}), tell the master of its sealed logs on one link ({@link SealedLogReport}): the first report is full (every log whose upload is confirmed,
 * with its digest), each later one only the logs new or changed since and the ids deleted since. A
 * link that ends loses nothing: the next link starts with a full report again. Lane thread only.
 */
final class SealedLogReporter {
    private final long worker;
    // what this link told the master, by log id; null until the first report
    private Map<Integer, SealedLogReport.Sealed> told;
    private long unhashedTold = -1; // the unhashed count of the last report; -1 none

    /** Reports for worker {@code worker} (its objects' key space). */
    SealedLogReporter(long worker) {
        this.worker = worker;
    }

    /** The report for a DATA_SYNCED of {@code store} (just synced: every sealed log is in the bucket), or null if it archives nothing. */
    SealedLogReport next(DataStore store) {
        LogArchive archive = store.archive();
        if (archive == null) {
            return null;
        }
        Map<Integer, SealedLogReport.Sealed> now = new TreeMap<>();
        long unhashed = 0;
        for (LogArchive.UploadedLog u : archive.uploadedLogs()) {
            SealedDigests.Digest d = u.digest();
            long[] eil = WorkerKeys.logOf(worker, u.key());
            if (d == null || eil == null) {
                unhashed++; // uploaded before digests were kept: the master reads it unchecked, as before
                continue;
            }
            now.put(u.id(), new SealedLogReport.Sealed(u.id(), eil[0], eil[2], d.size(), d.sha256()));
        }
        if (now.size() > SealedLogReport.MAX_LOGS) {
            // more than one report carries: the master keeps no record, and reads the bucket unchecked, as before
            told = Map.of();
            unhashedTold = -1; // so every report between syncs says so again: a full report drops records
            return new SealedLogReport(true, List.of(), List.of(), Math.min(0xffffffffL, unhashed + now.size()));
        }
        List<SealedLogReport.Sealed> changed = new ArrayList<>();
        List<Integer> dropped = new ArrayList<>();
        if (told != null) {
            for (SealedLogReport.Sealed s : now.values()) {
                if (!same(told.get(s.logId()), s)) {
                    changed.add(s);
                }
            }
            for (int id : told.keySet()) {
                if (!now.containsKey(id)) {
                    dropped.add(id);
                }
            }
        }
        unhashedTold = unhashed;
        boolean full = told == null || changed.size() > SealedLogReport.MAX_LOGS || dropped.size() > SealedLogReport.MAX_LOGS;
        told = now;
        return full ? new SealedLogReport(true, List.copyOf(now.values()), List.of(), unhashed)
                : new SealedLogReport(false, changed, dropped, unhashed);
    }

    /**
     * As {@link #next}, or null if the report would tell the master nothing it was not told on this link
     * (no log new, changed or dropped, the same unhashed count): a report between syncs is then not sent.
     */
    SealedLogReport nextIfNew(DataStore store) {
        long before = unhashedTold;
        SealedLogReport r = next(store);
        return r == null || !r.full() && r.sealed().isEmpty() && r.dropped().isEmpty() && r.unhashed() == before ? null : r;
    }

    private static boolean same(SealedLogReport.Sealed a, SealedLogReport.Sealed b) {
        return a != null && a.epoch() == b.epoch() && a.logEpoch() == b.logEpoch() && a.size() == b.size()
                && Arrays.equals(a.sha256(), b.sha256());
    }
}
