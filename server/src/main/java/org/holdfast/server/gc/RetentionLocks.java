package org.holdfast.server.gc;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.retention.ExpiryCalculator;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.MetadataBatch;

/**
 * Retention locks (holds) on snapshots. A lock pins the snapshot's blocks through the GC's
 * {@code held} flag, so the retention cycle never deletes it and the sweep never frees its blocks;
 * its mode and date live in a lock record ({@code gc/l}, {@link GcRecords#encodeLock}) written in the
 * same batch as the flag.
 *
 * <ul>
 * <li><b>governance</b>: kept until released (an admin's decision: the REST layer checks the role)
 *     or, if it has a date, until then. A legal hold is a governance lock without a date; a {@code held}
 *     flag without a lock record (a hold from before locks existed) reads as one.</li>
 * <li><b>compliance</b>: always dated. Before the date nobody can release or shorten it, delete the
 *     snapshot or its volume, or shorten the volume's retention; it can only be extended. At the date
 *     it lapses by itself (the next GC cycle) and the snapshot then expires under its policy.</li>
 * </ul>
 * Every refusal is a {@link SnapshotLockedException} naming the lock and its date.
 *
 * <p>Lock: placing, releasing and lapsing run under the commit monitor (the flag changes through
 * {@link Pins}, which takes it too); {@link #lapse} is called by the retention cycle, under the
 * cycle lock.
 */
public final class RetentionLocks {
    /** The two lock modes of the design (S3 Object Lock's names). */
    public enum Mode {
        GOVERNANCE(1), COMPLIANCE(2);

        final int code;

        Mode(int code) {
            this.code = code;
        }

        /** {@code governance} or {@code compliance}, as in the API. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** Parses {@code governance|compliance}, any case. */
        public static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.name().equalsIgnoreCase(s == null ? "" : s.trim())) {
                    return m;
                }
            }
            throw new IllegalArgumentException("unknown lock mode '" + s + "': use governance or compliance");
        }

        static Mode of(int code) {
            return code == 2 ? COMPLIANCE : GOVERNANCE;
        }
    }

    /** A snapshot's lock; {@code untilMillis} null means no date (governance only). */
    public record Lock(String volume, long sequence, Mode mode, Long untilMillis, long placedAtMillis, String placedBy) {
        /** True while the lock still binds at {@code now}. */
        public boolean activeAt(long now) {
            return untilMillis == null || now < untilMillis;
        }

        /** E.g. {@code compliance lock on db1@7 until 2027-01-01T00:00:00Z}. */
        public String describe() {
            return mode.wireName() + " lock on " + volume + "@" + sequence
                    + (untilMillis == null ? " without date (legal hold)" : " until " + Instant.ofEpochMilli(untilMillis));
        }
    }

    private final Pins pins;
    private final Catalog catalog;
    private final GcRecords records;
    private final Clock clock;
    private final Supplier<Object> commitMonitor;
    private final ExpiryCalculator calc = new ExpiryCalculator();
    private volatile AuditLog audit = AuditLog.NONE;

    RetentionLocks(Pins pins, Catalog catalog, GcRecords records, Clock clock, Supplier<Object> commitMonitor) {
        this.pins = pins;
        this.catalog = catalog;
        this.records = records;
        this.clock = clock;
        this.commitMonitor = commitMonitor;
    }

    /** Where the GC's own actions (lapsed locks, expired snapshots) are audited, as principal {@code system}. */
    public void auditTo(AuditLog log) {
        this.audit = log == null ? AuditLog.NONE : log;
    }

    /**
     * Places a lock, or changes the one there: a governance lock may become compliance or get a later
     * date; a compliance lock may only get a later date. Anything that would shorten or weaken a lock
     * is refused (release a governance lock first). {@code by} is the principal's name, for the record.
     */
    public Lock place(VolumeId volume, long sequence, Mode mode, Long untilMillis, String by) {
        long now = clock.millis();
        if (untilMillis != null && untilMillis <= now) {
            throw new IllegalArgumentException("lock date " + Instant.ofEpochMilli(untilMillis) + " is not in the future");
        }
        if (mode == Mode.COMPLIANCE && untilMillis == null) {
            throw new IllegalArgumentException("a compliance lock needs a date ('until'); it can never be released before it");
        }
        synchronized (commitMonitor.get()) {
            VolumeRecord v = catalog.requireVolume(volume);
            catalog.snapshot(v, sequence).orElseThrow(() -> new UnknownSnapshotException(volume.name(), sequence));
            Lock old = lockOf(v, sequence).filter(l -> l.activeAt(now)).orElse(null);
            if (old != null) {
                refuseWeakening(old, mode, untilMillis);
            }
            GcRecords.LockRecord rec = new GcRecords.LockRecord(v.internalId(), sequence, mode.code,
                    untilMillis == null ? 0 : untilMillis, now, by == null ? "" : by);
            boolean pinned = pins.change(volume, sequence, GcRecords.HELD, true, b -> records.putLock(b, rec));
            if (!pinned) { // already held: only the record changes
                try (MetadataBatch batch = new MetadataBatch()) {
                    records.putLock(batch, rec);
                    catalog.write(batch);
                }
            }
            return lockOf(v, sequence).orElseThrow();
        }
    }

    private static void refuseWeakening(Lock old, Mode mode, Long until) {
        if (old.mode() == Mode.COMPLIANCE && mode == Mode.GOVERNANCE) {
            throw new SnapshotLockedException(old, "cannot be turned into a governance lock before its date");
        }
        boolean shorter = until != null && (old.untilMillis() == null || until < old.untilMillis());
        if (shorter) {
            throw new SnapshotLockedException(old, "cannot be shortened (a lock can only be extended)"
                    + (old.mode() == Mode.GOVERNANCE ? "; an admin may release it and place a new one" : ""));
        }
        if (old.mode() == Mode.COMPLIANCE && until == null) {
            throw new SnapshotLockedException(old, "needs a date");
        }
    }

    /**
     * Releases a snapshot's lock (nothing if it has none). A compliance lock before its date is
     * refused; a governance lock goes (the caller has checked that an admin asks).
     */
    public void release(VolumeId volume, long sequence) {
        long now = clock.millis();
        synchronized (commitMonitor.get()) {
            VolumeRecord v = catalog.requireVolume(volume);
            catalog.snapshot(v, sequence).orElseThrow(() -> new UnknownSnapshotException(volume.name(), sequence));
            Lock l = lockOf(v, sequence).orElse(null);
            if (l == null) {
                return;
            }
            if (l.mode() == Mode.COMPLIANCE && l.activeAt(now)) {
                throw new SnapshotLockedException(l, "cannot be released before its date, not even by an admin");
            }
            pins.change(volume, sequence, GcRecords.HELD, false, b -> records.deleteLock(b, v.internalId(), sequence));
        }
    }

    /** The snapshot's lock, if any (a lapsed one still shows until the next GC cycle removes it). */
    public Optional<Lock> lock(VolumeId volume, long sequence) {
        return lockOf(catalog.requireVolume(volume), sequence);
    }

    /** Every lock of a volume's snapshots, by sequence (one pass, for listings). */
    public Map<Long, Lock> locks(VolumeId volume) {
        VolumeRecord v = catalog.requireVolume(volume);
        Map<Long, Lock> out = new java.util.TreeMap<>();
        for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
            if (s.held()) {
                lockOf(v, s.sequence()).ifPresent(l -> out.put(s.sequence(), l));
            }
        }
        return out;
    }

    Optional<Lock> lockOf(VolumeRecord v, long sequence) {
        GcRecords.LockRecord r = records.lock(v.internalId(), sequence);
        if (r != null) {
            return Optional.of(new Lock(v.name().name(), sequence, Mode.of(r.mode()), r.until() == 0 ? null : r.until(),
                    r.placedAt(), r.placedBy()));
        }
        boolean held = records.snapshots(v.internalId()).stream().anyMatch(s -> s.sequence() == sequence && s.held());
        return held ? Optional.of(new Lock(v.name().name(), sequence, Mode.GOVERNANCE, null, 0, "")) : Optional.empty();
    }

    /** The refusal for removing a held snapshot: names its lock and date. */
    SnapshotLockedException refusal(VolumeRecord v, long sequence, String what) {
        Lock l = lockOf(v, sequence).orElseThrow();
        return new SnapshotLockedException(l, what + (l.mode() == Mode.GOVERNANCE
                ? "; an admin must release the hold (lock) first" : " before its date"));
    }

    /**
     * Refuses a policy change that would keep any snapshot of the volume for a shorter time (an
     * earlier expiry, or fewer kept by keep-last) while the volume has an active compliance lock.
     * Longer or equal policies pass. Called under the commit monitor.
     */
    void checkPolicyChange(VolumeRecord v, RetentionPolicy current, RetentionPolicy proposed) {
        long now = clock.millis();
        Lock binding = null;
        for (GcRecords.LockRecord r : records.locks()) {
            if (r.volume() == v.internalId() && r.mode() == Mode.COMPLIANCE.code && now < r.until()) {
                binding = lockOf(v, r.sequence()).orElseThrow();
                break;
            }
        }
        if (binding == null) {
            return;
        }
        boolean shorter = proposed.keepLast() < current.keepLast();
        List<Long> earlier = new ArrayList<>();
        for (SnapshotRecord s : catalog.snapshots(v)) {
            if (calc.expiryOf(proposed, s.createdAtMillis(), earlier) < calc.expiryOf(current, s.createdAtMillis(), earlier)) {
                shorter = true;
            }
            earlier.add(s.createdAtMillis());
        }
        if (shorter) {
            throw new SnapshotLockedException(binding, "volume '" + v.name().name() + "' retention '" + current
                    + "' cannot be shortened to '" + proposed + "' while the lock holds; a longer policy is accepted");
        }
    }

    /**
     * Removes the locks whose date has passed at {@code now} (their snapshots then expire under their
     * policy), audited as {@code lock.lapse} by {@code system}. Returns how many lapsed.
     */
    int lapse(long now) {
        Map<Long, VolumeRecord> byId = new HashMap<>();
        for (VolumeRecord v : catalog.volumes()) {
            byId.put(v.internalId(), v);
        }
        int n = 0;
        for (GcRecords.LockRecord r : records.locks()) {
            VolumeRecord v = byId.get(r.volume());
            if (r.until() == 0 || now < r.until() || v == null) {
                continue;
            }
            synchronized (commitMonitor.get()) {
                GcRecords.LockRecord again = records.lock(r.volume(), r.sequence());
                if (again == null || again.until() == 0 || now < again.until()) {
                    continue; // extended meanwhile
                }
                pins.change(v.name(), r.sequence(), GcRecords.HELD, false, b -> records.deleteLock(b, r.volume(), r.sequence()));
            }
            n++;
            system(now, "lock.lapse", v.name().name() + "@" + r.sequence(),
                    Mode.of(r.mode()).wireName() + " lock until " + Instant.ofEpochMilli(r.until()) + " lapsed");
        }
        return n;
    }

    /** Audits snapshots that the retention cycle deleted. */
    void expired(VolumeRecord v, List<Long> sequences, long now) {
        for (long seq : sequences) {
            system(now, "snapshot.expire", v.name().name() + "@" + seq, "expired under its retention policy");
        }
    }

    private void system(long now, String action, String target, String detail) {
        audit.record(new AuditEvent(now, "system", "local", action, "volume:" + target, "ok", detail));
    }
}
