package org.holdfast.server.gc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * The counts fences of a master with {@code data=workers} restored from a catalog backup: per worker,
 * in the catalog's {@code meta} column, "this worker's GC counts predate the restored catalog". A
 * fenced worker is never asked to sweep (its counts may be below the catalog's: a snapshot deleted
 * after the backup was decremented there, and the restored catalog still holds it), until its
 * counts are rebuilt from the restored catalog: the worker's next registration lifts the fence when
 * it reports a counts file imported whose mark proves it was exported after the restore
 * ({@link RegistrationCountsFence}, cluster version 7), or the operator clears it offline with that
 * file ({@link CountsFenceRelease}, for an older worker). A registration also fences a worker whose
 * counts this master cannot account for ({@link CountsMarkDecision}); its time is then the registration's.
 *
 * <p>Key {@code gc.counts-fence.w<worker id, decimal>}; value (big-endian, 17 bytes): u8 version 1,
 * u64 floor (the lowest mark a counts file exported from the restored catalog has), u64 time of the
 * restore (epoch ms). A value that does not read is a fence all the same (sweeps stay refused).
 */
public final class WorkerCountsFences {
    /** Format version of a fence's value. */
    public static final int VERSION = 1;
    static final String PREFIX = "gc.counts-fence.w";
    private static final int VALUE_BYTES = 1 + 8 + 8;

    /** Worker {@code workerId}'s fence: counts files with a mark below {@code floor} predate the restore of {@code restoredMillis}. */
    public record Fence(long workerId, long floor, long restoredMillis) {
    }

    private final MetadataDb db;

    public WorkerCountsFences(MetadataDb db) {
        this.db = db;
    }

    /** Puts worker {@code workerId}'s fence into {@code batch}. */
    public void put(MetadataBatch batch, long workerId, long floor, long restoredMillis) {
        db.put(batch, MetadataDb.Column.META, key(workerId), encode(floor, restoredMillis));
    }

    /** Worker {@code workerId}'s fence, or null if it has none; an unreadable value is a fence with floor and time unknown (-1). */
    public Fence of(long workerId) {
        byte[] v = db.get(MetadataDb.Column.META, key(workerId));
        return v == null ? null : decode(workerId, v);
    }

    /** Every fence, by worker id ascending as the keys sort (decimal ids of equal length). */
    public List<Fence> all() {
        List<Fence> out = new ArrayList<>();
        byte[] prefix = PREFIX.getBytes(StandardCharsets.US_ASCII);
        try (CheckedIterator it = db.iterator(MetadataDb.Column.META)) {
            for (it.seek(prefix); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (k.length <= prefix.length || !Arrays.equals(k, 0, prefix.length, prefix, 0, prefix.length)) {
                    break;
                }
                long id = Long.parseLong(new String(k, prefix.length, k.length - prefix.length, StandardCharsets.US_ASCII));
                out.add(decode(id, it.value()));
            }
        }
        return out;
    }

    /** Deletes worker {@code workerId}'s fence (synced). */
    public void clear(long workerId) {
        try (MetadataBatch b = new MetadataBatch()) {
            db.delete(b, MetadataDb.Column.META, key(workerId));
            db.write(b, true);
        }
    }

    /** Why worker {@code workerId} must not sweep now (its fence), or null when it has none. */
    public String sweepRefusal(long workerId) {
        Fence f = of(workerId);
        if (f == null) {
            return null;
        }
        return "its GC counts predate this master's catalog restore (or were kept by another master's deltas), so it may count"
                + " fewer references than this catalog has; not swept until they are rebuilt from it: with master and worker stopped,"
                + " gc-rebuild --worker " + workerId + " --out FILE on the master, worker-gc-import on the worker, then start both: the"
                + " worker's next registration lifts the fence (a worker before cluster version 7: gc-rebuild --worker " + workerId
                + " --counts-imported FILE on the stopped master; docs/operations.md, \"Recover a lost master of a data=workers"
                + " cluster\")";
    }

    static byte[] key(long workerId) {
        return (PREFIX + workerId).getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] encode(long floor, long restoredMillis) {
        return ByteBuffer.allocate(VALUE_BYTES).put((byte) VERSION).putLong(floor).putLong(restoredMillis).array();
    }

    private static Fence decode(long workerId, byte[] v) {
        if (v.length != VALUE_BYTES || v[0] != VERSION) {
            return new Fence(workerId, -1, -1); // still a fence: nothing sweeps on a value this release cannot read
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        b.get();
        return new Fence(workerId, b.getLong(), b.getLong());
    }
}
