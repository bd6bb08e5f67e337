package org.holdfast.server.catalog;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The audit log in the catalog database (column family {@code audit}), and one log line per entry
 * (logger {@code holdfast.audit}).
 *
 * <p>Key: u64 time (epoch ms) + u64 sequence, big-endian, so keys sort by time and a page is a
 * range scan (newest first: backwards). The sequence orders entries of the same millisecond and
 * grows across restarts (it continues from the newest key). Value: {@link #encode} (a version byte
 * first; docs/architecture.md has the byte table).
 *
 * <p>Bounded growth: entries older than the retention are deleted on write, at most once an hour
 * (and at open). Recording never throws: a store failure is logged (the log line still carries the
 * entry) so that a full disk cannot turn every request into an error.
 */
public final class AuditStore implements AuditLog {
    private static final System.Logger LINE = System.getLogger("holdfast.audit");
    private static final System.Logger LOG = System.getLogger(AuditStore.class.getName());
    static final int VERSION = 1;
    /** Longest stored text field, in UTF-8 bytes (longer ones are cut: entries stay small). */
    static final int MAX_FIELD_BYTES = 512;
    /** Largest page {@link #query} returns. */
    public static final int MAX_LIMIT = 1000;
    private static final long PRUNE_EVERY_MS = 3_600_000L;

    /** A stored entry: the event and its position (for cursors). */
    public record Entry(long sequence, AuditEvent event) {
        /** Opaque cursor naming this entry: the next page starts just after (older than) it. */
        public String cursor() {
            return event.timeMillis() + "-" + sequence;
        }
    }

    /**
     * Filters of a query; nulls match everything. {@code fromMillis} inclusive, {@code toMillis}
     * exclusive; {@code targetPrefix} matches the start of the target ({@code volume:db1} matches
     * {@code volume:db1@7}); {@code cursor} continues after a previous page's last entry.
     */
    public record Query(Long fromMillis, Long toMillis, String principal, String action, String targetPrefix,
                        String result, int limit, String cursor) {
        public Query {
            if (limit < 1 || limit > MAX_LIMIT) {
                throw new IllegalArgumentException("limit must be 1.." + MAX_LIMIT + ", got " + limit);
            }
        }

        boolean matches(AuditEvent e) {
            return (principal == null || principal.equals(e.principal()))
                    && (action == null || action.equals(e.action()))
                    && (targetPrefix == null || e.target().startsWith(targetPrefix))
                    && (result == null || result.equals(e.result()));
        }
    }

    /** A page, newest first; {@code nextCursor} null when there is nothing older. */
    public record Page(List<Entry> entries, String nextCursor) {
    }

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;
    private final Clock clock;
    private final Duration retention;
    private final AtomicLong nextSequence;
    private volatile long lastPrune;

    /** Opens on {@code db} (which has the {@code audit} column family); prunes once. */
    public AuditStore(MetadataDb db, Clock clock, Duration retention) {
        if (retention == null || retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("audit retention must be positive, got " + retention);
        }
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.AUDIT);
        this.clock = clock;
        this.retention = retention;
        long next = 1;
        try (CheckedIterator it = db.iterator(cf)) {
            it.seekToLast();
            if (it.isValid()) {
                next = Bytes.getLong(it.key(), 8) + 1;
            }
        }
        this.nextSequence = new AtomicLong(next);
        prune(clock.millis());
    }

    @Override
    public void record(AuditEvent e) {
        LINE.log(System.Logger.Level.INFO, () -> line(e));
        if (db.isClosed()) {
            return; // shutting down: the log line above is all there is
        }
        long seq = nextSequence.getAndIncrement();
        try (MetadataBatch batch = new MetadataBatch()) {
            db.put(batch, cf, key(e.timeMillis(), seq), encode(e));
            db.write(batch, false); // the WAL keeps it; an fsync per request would cost more than it protects
            long now = clock.millis();
            if (now - lastPrune >= PRUNE_EVERY_MS) {
                prune(now);
            }
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.ERROR, "audit entry could not be stored (it is in the log line above): " + ex.getMessage(), ex);
        }
    }

    /**
     * One log line: key=value pairs, values quoted. Each value is cut like a stored field and its
     * control characters are escaped: a caller-chosen value, such as a failed login's user name,
     * can neither make a huge line, forge a line, nor send terminal escapes to whoever reads the log.
     */
    static String line(AuditEvent e) {
        return "time=" + Instant.ofEpochMilli(e.timeMillis()) + " principal=" + q(e.principal()) + " source=" + q(e.source())
                + " action=" + q(e.action()) + " target=" + q(e.target()) + " result=" + q(e.result())
                + " detail=" + q(e.detail());
    }

    private static String q(String s) {
        String v = new String(cut(s), StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(v.length() + 2).append('"');
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            switch (c) {
                case '\\' -> sb.append("\\\\");
                case '"' -> sb.append("\\\"");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                default -> {
                    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /** Entries newest first, filtered, at most {@code q.limit()}. */
    public Page query(Query q) {
        long from = q.fromMillis() == null ? Long.MIN_VALUE : q.fromMillis();
        byte[] start;
        if (q.cursor() != null) {
            long[] c = parseCursor(q.cursor());
            start = c[1] == 0 ? key(c[0] - 1, -1L) : key(c[0], c[1] - 1); // just before the cursor's entry
        } else {
            start = q.toMillis() == null ? null : key(q.toMillis() - 1, -1L);
        }
        List<Entry> out = new ArrayList<>();
        String next = null;
        try (CheckedIterator it = db.iterator(cf)) {
            if (start == null) {
                it.seekToLast();
            } else {
                it.seekForPrev(start);
            }
            for (; it.isValid(); it.prev()) {
                byte[] k = it.key();
                long time = Bytes.getLong(k, 0);
                if (time < from) {
                    break;
                }
                if (q.toMillis() != null && time >= q.toMillis()) {
                    continue;
                }
                AuditEvent e = decode(time, it.value(), db.path());
                if (!q.matches(e)) {
                    continue;
                }
                if (out.size() == q.limit()) {
                    next = out.get(out.size() - 1).cursor();
                    break;
                }
                out.add(new Entry(Bytes.getLong(k, 8), e));
            }
        }
        return new Page(out, next);
    }

    private static long[] parseCursor(String c) {
        int dash = c.indexOf('-', 1);
        try {
            if (dash < 0) {
                throw new NumberFormatException();
            }
            return new long[] {Long.parseLong(c.substring(0, dash)), Long.parseUnsignedLong(c.substring(dash + 1))};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("cursor '" + c + "' is not one this server gave out; start again without a cursor");
        }
    }

    /** Deletes the entries older than the retention; returns how many. */
    public long prune(long now) {
        lastPrune = now;
        long cutoff = now - retention.toMillis();
        long n = 0;
        try (CheckedIterator it = db.iterator(cf); MetadataBatch batch = new MetadataBatch()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (Bytes.getLong(k, 0) >= cutoff) {
                    break;
                }
                db.delete(batch, cf, k);
                n++;
            }
            if (n > 0) {
                db.write(batch, false);
            }
        }
        if (n > 0) {
            long pruned = n;
            LOG.log(System.Logger.Level.INFO, () -> "audit: " + pruned + " entries older than " + retention.toDays() + " days deleted");
        }
        return n;
    }

    static byte[] key(long time, long seq) {
        byte[] k = new byte[16];
        // times before 1970 do not occur; flipping the sign bit would keep them ordered but costs clarity
        Bytes.putLong(k, 0, time);
        Bytes.putLong(k, 8, seq);
        return k;
    }

    /**
     * Value, version 1: u8 version, then six fields, each u16 length n (big-endian) and n bytes of
     * UTF-8, in this order: principal, source, action, target, result, detail. The time is the key's.
     */
    static byte[] encode(AuditEvent e) {
        String[] fields = {e.principal(), e.source(), e.action(), e.target(), e.result(), e.detail()};
        byte[][] raw = new byte[fields.length][];
        int size = 1;
        for (int i = 0; i < fields.length; i++) {
            raw[i] = cut(fields[i]);
            size += 2 + raw[i].length;
        }
        byte[] v = new byte[size];
        v[0] = VERSION;
        int p = 1;
        for (byte[] f : raw) {
            v[p] = (byte) (f.length >>> 8);
            v[p + 1] = (byte) f.length;
            System.arraycopy(f, 0, v, p + 2, f.length);
            p += 2 + f.length;
        }
        return v;
    }

    static AuditEvent decode(long time, byte[] v, String path) {
        if (v.length < 1 || v[0] != VERSION) {
            throw new CorruptDataException("audit", path, "entry at " + time,
                    v.length < 1 ? "empty value" : "version " + v[0] + " not understood (expected " + VERSION + ")");
        }
        String[] f = new String[6];
        int p = 1;
        for (int i = 0; i < f.length; i++) {
            if (p + 2 > v.length) {
                throw new CorruptDataException("audit", path, "entry at " + time, "truncated value " + HexFormat.of().formatHex(v));
            }
            int n = ((v[p] & 0xff) << 8) | (v[p + 1] & 0xff);
            if (p + 2 + n > v.length) {
                throw new CorruptDataException("audit", path, "entry at " + time, "field " + i + " runs past the value");
            }
            f[i] = new String(v, p + 2, n, StandardCharsets.UTF_8);
            p += 2 + n;
        }
        return new AuditEvent(time, f[0], f[1], f[2], f[3], f[4], f[5]);
    }

    private static byte[] cut(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_FIELD_BYTES) {
            return b;
        }
        // cut on a character boundary so the stored text stays valid UTF-8
        int n = MAX_FIELD_BYTES;
        while (n > 0 && (b[n] & 0xc0) == 0x80) {
            n--;
        }
        return java.util.Arrays.copyOf(b, n);
    }
}
