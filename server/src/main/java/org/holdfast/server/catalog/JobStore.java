package org.holdfast.server.catalog;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobHistory;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The job history in the catalog database (column family {@code jobs}): the last known state of
 * the newest jobs, so that what ran survives a restart.
 *
 * <p>Key: u64 job id, big-endian (ids grow, so the oldest job is the first key). Value:
 * {@link #encode} (a version byte first; docs/architecture.md has the byte table).
 *
 * <p>A damaged record is skipped with a warning, never a reason to refuse to start.
 *
 * <p>Bounded: after a new job is saved, the oldest beyond {@code capacity} are deleted. At open,
 * every job still recorded as queued or running was cut off by the server's death or stop: it is
 * recorded as failed, "interrupted by a restart", so no job stays running forever.
 */
public final class JobStore implements JobHistory {
    private static final System.Logger LOG = System.getLogger(JobStore.class.getName());
    static final int VERSION = 1;
    /** What an interrupted job's error says. */
    public static final String INTERRUPTED = "interrupted by a restart: the server stopped or died while the job was"
            + " queued or running; start it again";
    /** Deepest result nesting decoded (the runner keeps results shallower). */
    static final int MAX_DEPTH = 16;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;
    private final int capacity;
    private long count; // guarded by this

    /** Opens on {@code db}; repairs jobs a restart cut off (as of {@code clock}) and prunes to {@code capacity}. */
    public JobStore(MetadataDb db, int capacity, Clock clock) {
        if (capacity < 1) {
            throw new IllegalArgumentException("job history capacity must be positive, got " + capacity);
        }
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.JOBS);
        this.capacity = capacity;
        Unfinished cutOff = endUnfinished(db, Instant.ofEpochMilli(clock.millis()), j -> INTERRUPTED);
        count = cutOff.jobs();
        if (cutOff.ended() > 0) {
            LOG.log(System.Logger.Level.WARNING, cutOff.ended() + " job(s) were cut off by a restart and are recorded as failed");
        }
        synchronized (this) {
            prune();
        }
    }

    @Override
    public synchronized void save(Job job) {
        byte[] k = key(job.id());
        boolean isNew = db.get(cf, k) == null;
        db.put(cf, k, encode(job)); // unsynced: the WAL keeps it; a lost last update is repaired at the next start
        if (isNew) {
            count++;
            prune();
        }
    }

    @Override
    public List<Job> newest(int limit) {
        List<Job> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seekToLast(); it.isValid() && out.size() < limit; it.prev()) {
                Job j = decodeOrSkip(db, it.key(), it.value());
                if (j != null) {
                    out.add(j);
                }
            }
        }
        return out;
    }

    /**
     * The job, or null (logged) if its record is damaged: the history only informs, so a bad record
     * must not keep the server from starting; it leaves with the pruning like any other.
     */
    private static Job decodeOrSkip(MetadataDb db, byte[] key, byte[] value) {
        try {
            if (key.length != 8) {
                throw new CorruptDataException("jobs", db.path(), java.util.HexFormat.of().formatHex(key), "key is not a u64 job id");
            }
            return decode(Bytes.getLong(key, 0), value, db.path());
        } catch (CorruptDataException e) {
            LOG.log(System.Logger.Level.WARNING, "job history: skipping a damaged record: " + e.getMessage());
            return null;
        }
    }

    /**
     * For catalog-restore: ends every job that a restored catalog backup holds as queued or running,
     * saying so. The backup copied the catalog while they ran (the catalog-backup job that wrote it
     * among them), so the next start would otherwise report them "interrupted by a restart", and
     * the job that wrote the very backup restored would read as a failed backup. Returns how many.
     */
    public static int endCutOffByRestore(MetadataDb db, Instant at) {
        return endUnfinished(db, at, j -> restoredError(j, at)).ended();
    }

    /** How many jobs the catalog holds ({@code jobs}, damaged records included) and how many of them were ended. */
    private record Unfinished(long jobs, int ended) {
    }

    /**
     * Ends every job the catalog holds as queued or running: FAILED at {@code at}, with the error
     * {@code why} gives for it (a restart that cut it off, or a restored catalog backup that held it).
     */
    private static Unfinished endUnfinished(MetadataDb db, Instant at, Function<Job, String> why) {
        ColumnFamilyHandle cf = db.handle(MetadataDb.Column.JOBS);
        long jobs = 0;
        List<Job> open = new ArrayList<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                jobs++;
                Job j = decodeOrSkip(db, it.key(), it.value());
                if (j != null && !j.state().finished()) {
                    open.add(j);
                }
            }
        }
        for (Job j : open) {
            db.put(cf, key(j.id()), encode(j.ended(JobState.FAILED, at, why.apply(j))));
        }
        return new Unfinished(jobs, open.size());
    }

    private static String restoredError(Job j, Instant at) {
        return CatalogBackupJobs.KIND.equals(j.kind())
                ? "this job was writing the catalog backup that catalog-restore restored at " + at + " (the backup holds the"
                        + " job as running, not its end); that backup was verified sound before the restore"
                : "the catalog was backed up while this job was " + j.state().wireName() + ", and catalog-restore restored that"
                        + " backup at " + at + ": the job's end is not recorded; start it again if it is still needed";
    }

    /** Jobs stored now. */
    public synchronized long size() {
        return count;
    }

    private void prune() {
        if (count <= capacity) {
            return;
        }
        try (CheckedIterator it = db.iterator(cf); MetadataBatch batch = new MetadataBatch()) {
            long n = 0;
            for (it.seekToFirst(); it.isValid() && count - n > capacity; it.next()) {
                db.delete(batch, cf, it.key());
                n++;
            }
            db.write(batch, false);
            count -= n;
        }
    }

    static byte[] key(long id) {
        byte[] k = new byte[8];
        Bytes.putLong(k, 0, id);
        return k;
    }

    // ------------------------------------------------------------------ value format

    private static int stateCode(JobState s) {
        return switch (s) {
            case QUEUED -> 0;
            case RUNNING -> 1;
            case SUCCEEDED -> 2;
            case FAILED -> 3;
            case CANCELLED -> 4;
        };
    }

    private static JobState state(int code) {
        return switch (code) {
            case 0 -> JobState.QUEUED;
            case 1 -> JobState.RUNNING;
            case 2 -> JobState.SUCCEEDED;
            case 3 -> JobState.FAILED;
            case 4 -> JobState.CANCELLED;
            default -> null;
        };
    }

    /**
     * Value, version 1 (integers big-endian; a string is i32 length n, -1 for none, then n bytes of
     * UTF-8): u8 version; u8 state (0 queued, 1 running, 2 succeeded, 3 failed, 4 cancelled); u8
     * flags (bit 0: cancel requested); i64 submitted, started, ended (epoch ms, -1 for not yet); i64
     * items done, items total, bytes done, bytes total (-1: unknown); f64 items/s, bytes/s; string
     * kind, submitted by, error; i32 log line count and each line as a string; the result as a
     * tagged value (u8 tag: {@code N} none, {@code S} string, {@code L} i64, {@code D} f64, {@code B}
     * u8 boolean, {@code M} i32 count then string key and tagged value each, {@code A} i32 count then
     * tagged values). The id is the key's.
     */
    static byte[] encode(Job j) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeByte(stateCode(j.state()));
            out.writeByte(j.cancelRequested() ? 1 : 0);
            out.writeLong(millis(j.submittedAt()));
            out.writeLong(millis(j.startedAt()));
            out.writeLong(millis(j.endedAt()));
            Job.Progress p = j.progress();
            out.writeLong(p.itemsDone());
            out.writeLong(p.itemsTotal());
            out.writeLong(p.bytesDone());
            out.writeLong(p.bytesTotal());
            out.writeDouble(p.itemsPerSecond());
            out.writeDouble(p.bytesPerSecond());
            string(out, j.kind());
            string(out, j.submittedBy());
            string(out, j.error());
            out.writeInt(j.log().size());
            for (String line : j.log()) {
                string(out, line);
            }
            value(out, j.result());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    private static long millis(Instant i) {
        return i == null ? -1 : i.toEpochMilli();
    }

    private static void string(DataOutputStream out, String s) throws IOException {
        if (s == null) {
            out.writeInt(-1);
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static void value(DataOutputStream out, Object v) throws IOException {
        if (v == null) {
            out.writeByte('N');
        } else if (v instanceof String s) {
            out.writeByte('S');
            string(out, s);
        } else if (v instanceof Boolean b) {
            out.writeByte('B');
            out.writeByte(b ? 1 : 0);
        } else if (v instanceof Double || v instanceof Float) {
            out.writeByte('D');
            out.writeDouble(((Number) v).doubleValue());
        } else if (v instanceof Number n) {
            out.writeByte('L');
            out.writeLong(n.longValue());
        } else if (v instanceof Map<?, ?> m) {
            out.writeByte('M');
            out.writeInt(m.size());
            for (Map.Entry<?, ?> e : m.entrySet()) {
                string(out, String.valueOf(e.getKey()));
                value(out, e.getValue());
            }
        } else if (v instanceof List<?> l) {
            out.writeByte('A');
            out.writeInt(l.size());
            for (Object x : l) {
                value(out, x);
            }
        } else {
            out.writeByte('S');
            string(out, String.valueOf(v));
        }
    }

    static Job decode(long id, byte[] v, String path) {
        Reader r = new Reader(id, v, path);
        int version = r.u8();
        if (version != VERSION) {
            throw r.corrupt("version " + version + " not understood (expected " + VERSION + ")");
        }
        JobState state = state(r.u8());
        if (state == null) {
            throw r.corrupt("unknown state code");
        }
        boolean cancel = (r.u8() & 1) != 0;
        Instant submitted = r.instant();
        Instant started = r.instant();
        Instant ended = r.instant();
        long itemsDone = r.i64();
        long itemsTotal = r.i64();
        long bytesDone = r.i64();
        long bytesTotal = r.i64();
        double itemRate = r.f64();
        double byteRate = r.f64();
        String kind = r.string();
        String by = r.string();
        String error = r.string();
        int lines = r.count();
        List<String> log = new ArrayList<>(lines);
        for (int i = 0; i < lines; i++) {
            log.add(r.string());
        }
        Object result = r.value(0);
        if (result != null && !(result instanceof Map)) {
            throw r.corrupt("the result is not a map");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) result;
        if (r.buf.hasRemaining()) {
            throw r.corrupt(r.buf.remaining() + " bytes after the result");
        }
        return new Job(id, kind, state, by, submitted, started, ended,
                new Job.Progress(itemsDone, itemsTotal, bytesDone, bytesTotal, itemRate, byteRate, null), cancel, map, error, log);
    }

    /** Reads a value, checking every length against what is left before allocating. */
    private static final class Reader {
        final long id;
        final ByteBuffer buf;
        final String path;

        Reader(long id, byte[] v, String path) {
            this.id = id;
            this.buf = ByteBuffer.wrap(v);
            this.path = path;
        }

        CorruptDataException corrupt(String why) {
            return new CorruptDataException("jobs", path, "job " + id, why);
        }

        private void need(int n) {
            if (buf.remaining() < n) {
                throw corrupt("truncated value (" + buf.remaining() + " bytes left, " + n + " needed)");
            }
        }

        int u8() {
            need(1);
            return buf.get() & 0xff;
        }

        long i64() {
            need(8);
            return buf.getLong();
        }

        double f64() {
            need(8);
            return buf.getDouble();
        }

        Instant instant() {
            long ms = i64();
            return ms < 0 ? null : Instant.ofEpochMilli(ms);
        }

        int count() {
            need(4);
            int n = buf.getInt();
            if (n < 0 || n > buf.remaining()) { // every element takes at least one byte
                throw corrupt("count " + n + " runs past the value");
            }
            return n;
        }

        String string() {
            need(4);
            int n = buf.getInt();
            if (n == -1) {
                return null;
            }
            if (n < 0) {
                throw corrupt("negative string length " + n);
            }
            need(n);
            String s = new String(buf.array(), buf.position(), n, StandardCharsets.UTF_8);
            buf.position(buf.position() + n);
            return s;
        }

        Object value(int depth) {
            if (depth > MAX_DEPTH) {
                throw corrupt("result nested deeper than " + MAX_DEPTH);
            }
            int tag = u8();
            switch (tag) {
                case 'N':
                    return null;
                case 'S':
                    return string();
                case 'L':
                    return i64();
                case 'D':
                    return f64();
                case 'B':
                    return u8() != 0;
                case 'M': {
                    int n = count();
                    Map<String, Object> m = new LinkedHashMap<>();
                    for (int i = 0; i < n; i++) {
                        m.put(string(), value(depth + 1));
                    }
                    return Collections.unmodifiableMap(m);
                }
                case 'A': {
                    int n = count();
                    List<Object> l = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        l.add(value(depth + 1));
                    }
                    return Collections.unmodifiableList(l);
                }
                default:
                    throw corrupt("unknown result tag " + tag);
            }
        }
    }
}
