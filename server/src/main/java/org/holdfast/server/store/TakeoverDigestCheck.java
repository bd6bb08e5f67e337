package org.holdfast.server.store;

import java.security.MessageDigest;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.store.object.ObjectStore;

/**
 * A takeover's SHA-256 check of every adopted log the master holds a record of, before the claim
 * ({@link TakeoverCheck}): each object is streamed through SHA-256 by ranged GETs of {@link #CHUNK}
 * bytes (memory stays one chunk whatever the log's size; a retried request re-reads one chunk), so a
 * log replaced or rotted at its sealed size refuses the takeover while the old worker is not fenced
 * yet. Costs one read of the recorded logs; progress goes to the log at INFO (bytes, rate, time left),
 * at most one line per {@link #LOG_EVERY_NANOS}.
 */
final class TakeoverDigestCheck {
    private static final System.Logger LOG = System.getLogger(TakeoverDigestCheck.class.getName());
    /** Bytes per ranged GET. */
    static final int CHUNK = 8 << 20;
    /** Least time between two progress lines (the first and the last are always logged). */
    static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final long worker;
    private final long epoch;
    private final long totalBytes;
    private final int totalLogs;
    private final long t0 = System.nanoTime();
    private long lastLine = Long.MIN_VALUE;
    private long bytes;

    private TakeoverDigestCheck(long worker, long epoch, int totalLogs, long totalBytes) {
        this.worker = worker;
        this.epoch = epoch;
        this.totalLogs = totalLogs;
        this.totalBytes = totalBytes;
    }

    /**
     * Checks the objects {@code keys} of worker {@code worker} (each of the size {@code records} holds, as
     * the size check found) against their recorded SHA-256 before epoch {@code epoch} is claimed.
     *
     * @return why the first one that does not match is not what the worker sealed, or null if all match
     */
    static String check(long worker, long epoch, List<String> keys, ObjectStore objects, SealedLogs records) {
        return check(worker, epoch, keys, objects, records, CHUNK);
    }

    /** As {@link #check(long, long, List, ObjectStore, SealedLogs)}, by ranged GETs of {@code chunk} bytes. */
    static String check(long worker, long epoch, List<String> keys, ObjectStore objects, SealedLogs records, int chunk) {
        long total = 0;
        for (String k : keys) {
            total += records.recordedSize(k);
        }
        TakeoverDigestCheck c = new TakeoverDigestCheck(worker, epoch, keys.size(), total);
        int done = 0;
        for (String k : keys) {
            long size = records.recordedSize(k);
            String why = records.mismatch(k, size, c.sha256(objects, k, size, done, chunk));
            if (why != null) {
                return why;
            }
            done++;
        }
        c.line(done, true);
        return null;
    }

    /** The SHA-256 of the first {@code size} bytes of object {@code key} (log {@code done} + 1 of the check). */
    private byte[] sha256(ObjectStore objects, String key, long size, int done, int chunk) {
        MessageDigest md = SealedLogs.newSha256();
        for (long off = 0; off < size; ) {
            byte[] b = objects.getRange(key, off, (int) Math.min(chunk, size - off));
            if (b.length == 0) {
                break; // cut since its size was read: the digest of what is there differs
            }
            md.update(b);
            off += b.length;
            bytes += b.length;
            line(done, false);
        }
        return md.digest();
    }

    private void line(int done, boolean last) {
        long now = System.nanoTime();
        if (!last && lastLine != Long.MIN_VALUE && now - lastLine < LOG_EVERY_NANOS) {
            return;
        }
        lastLine = now;
        double seconds = Math.max((now - t0) / 1e9, 1e-3);
        double rate = bytes / 1048576.0 / seconds;
        if (last) {
            LOG.log(System.Logger.Level.INFO, "takeover of worker {0}''s range: the SHA-256 of all {1} recorded logs ({2} MiB) matches"
                    + " the master''s records, read in {3} s ({4} MiB/s); claiming epoch {5}", Long.toString(worker), totalLogs,
                    mib(bytes), String.format("%.1f", seconds), String.format("%.1f", rate), Long.toString(epoch));
            return;
        }
        long left = rate <= 0 ? -1 : Math.round((totalBytes - bytes) / 1048576.0 / rate);
        LOG.log(System.Logger.Level.INFO, "takeover of worker {0}''s range: checking the SHA-256 of the recorded logs before claiming"
                        + " epoch {1}: log {2}/{3}, {4}/{5} MiB read in {6} s ({7} MiB/s), about {8} s left; nothing is claimed until"
                        + " every log matches", Long.toString(worker), Long.toString(epoch), done + 1, totalLogs, mib(bytes),
                mib(totalBytes), String.format("%.1f", seconds), String.format("%.1f", rate), left);
    }

    private static String mib(long b) {
        return String.format("%.1f", b / 1048576.0);
    }
}
