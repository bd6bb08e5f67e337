package org.holdfast.server.store;

/**
 * The object keys of a worker's range (data on workers, backend s3): every worker id has its own
 * prefix, and below it one key space per takeover epoch, {@code workers/w<id>/e<epoch>}, holding its
 * sealed logs ({@code logs/<log id, 8 hex>-<log epoch, 16 hex>.hfl}, {@link LogKeys#key}) and,
 * from epoch 2 on, the {@code adopted} marker the node that took the range over wrote first
 * ({@link AdoptedMarker}). A node name never holds '/', so no standalone or master key space
 * ({@code <node>/logs/...}) lies below {@code workers/w<id>/}.
 */
public final class WorkerKeys {
    /** The prefix of every worker's keys. */
    static final String ROOT = "workers/";
    /** The marker's name in its epoch's key space. */
    static final String MARKER = "adopted";

    private WorkerKeys() {
    }

    /** The key space of worker {@code worker}'s logs at epoch {@code epoch}: the "node" of its {@link LogArchive}. */
    public static String space(long worker, long epoch) {
        return prefix(worker) + "e" + epoch;
    }

    /** The prefix under which every epoch of worker {@code worker} lies (one listing finds them all). */
    public static String prefix(long worker) {
        if (worker <= 0) {
            throw new IllegalArgumentException("a worker id is positive, got " + worker);
        }
        return ROOT + "w" + worker + "/";
    }

    /** The key of the marker a takeover of worker {@code worker}'s range at {@code epoch} writes first. */
    public static String marker(long worker, long epoch) {
        return space(worker, epoch) + "/" + MARKER;
    }

    /**
     * The epoch a key of worker {@code worker} lies under, or -1 for any other key (another worker's,
     * or a foreign object under the prefix whose epoch is not a plain positive decimal).
     */
    static long epochOf(long worker, String key) {
        String p = prefix(worker);
        if (!key.startsWith(p) || key.length() < p.length() + 3 || key.charAt(p.length()) != 'e') {
            return -1;
        }
        int slash = key.indexOf('/', p.length());
        if (slash < 0) {
            return -1;
        }
        String digits = key.substring(p.length() + 1, slash);
        if (digits.isEmpty() || digits.length() > 18 || digits.charAt(0) == '0' || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        return Long.parseLong(digits);
    }

    /** The object key of log {@code logId} of log epoch {@code logEpoch} that worker {@code worker} uploaded at takeover epoch {@code epoch}. */
    public static String logKey(long worker, long epoch, int logId, long logEpoch) {
        return LogKeys.key(space(worker, epoch), logId, logEpoch);
    }

    /** {takeover epoch, log id, log epoch} of a log key of worker {@code worker}, or null for any other key. */
    public static long[] logOf(long worker, String key) {
        long e = epochOf(worker, key);
        long[] ide = e < 1 ? null : log(worker, e, key);
        return ide == null ? null : new long[] {e, ide[0], ide[1]};
    }

    /** {log id, log epoch} of a log key of worker {@code worker} at {@code epoch}, or null for any other key. */
    static long[] log(long worker, long epoch, String key) {
        return LogKeys.parseKey(space(worker, epoch), key);
    }
}
