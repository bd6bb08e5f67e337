package org.holdfast.server.catalog;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.rocksdb.ColumnFamilyHandle;

/**
 * What an operator set on a volume (its quota) and how its last backup ended, in the
 * {@code volume-settings} column family. Keys are the volume's internal id (never reused, so a
 * volume created again under an old name starts clean) and a one-byte kind; every value starts
 * with a version byte (docs/architecture.md):
 *
 * <pre>
 * key: u64 internalId, u8 kind
 *   kind 1 (settings)  value: u8 version 1, i64 quotaBytes (-1: none)
 *   kind 2 (outcome)   value: u8 version 1, u64 atMillis, u8 result (1 success, 2 failure), u64 sequence (0 on failure),
 *                             u16 message length, UTF-8 message (at most 1024 bytes)
 * </pre>
 *
 * Kind 3 is the volume's sequence floor ({@link SequenceFloor}); kinds 4 and up are free for other
 * per-volume settings. Writes are synced. Thread-safe.
 */
public final class VolumeSettings {
    static final byte KIND_SETTINGS = 1;
    static final byte KIND_OUTCOME = 2;
    private static final byte VERSION = 1;
    private static final int SETTINGS_BYTES = 9;
    /** Longest failure message kept, in bytes (longer ones are cut). */
    public static final int MAX_MESSAGE_BYTES = 1024;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public VolumeSettings(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(Column.VOLUME_SETTINGS);
    }

    /** How a backup of a volume ended; {@code sequence} is the committed snapshot (0 for a failure). */
    public record Outcome(long atMillis, boolean success, long sequence, String message) {
    }

    /** The volume's quota in bytes, if one is set. */
    public Optional<Long> quota(long internalId) {
        byte[] v = db.get(cf, key(internalId, KIND_SETTINGS));
        if (v == null) {
            return Optional.empty();
        }
        if (v.length != SETTINGS_BYTES || v[0] != VERSION) {
            throw new CorruptDataException("catalog.volume-settings", db.path(), "volume " + internalId,
                    "settings value of " + v.length + " bytes, version " + (v.length > 0 ? v[0] : -1));
        }
        long q = Bytes.getLong(v, 1);
        return q < 0 ? Optional.empty() : Optional.of(q);
    }

    /** Sets the quota ({@code null}: none), durably. */
    public void setQuota(long internalId, Long quotaBytes) {
        if (quotaBytes != null && quotaBytes < 0) {
            throw new IllegalArgumentException("quota must be 0 or more bytes, got " + quotaBytes);
        }
        try (MetadataBatch b = new MetadataBatch()) {
            putQuota(b, internalId, quotaBytes);
            db.write(b, true);
        }
    }

    /** Adds the quota ({@code null}: none) to {@code batch}. */
    public void putQuota(MetadataBatch batch, long internalId, Long quotaBytes) {
        byte[] v = new byte[SETTINGS_BYTES];
        v[0] = VERSION;
        Bytes.putLong(v, 1, quotaBytes == null ? -1 : quotaBytes);
        db.put(batch, cf, key(internalId, KIND_SETTINGS), v);
    }

    /** How the volume's last backup ended, if one was recorded. */
    public Optional<Outcome> lastOutcome(long internalId) {
        byte[] v = db.get(cf, key(internalId, KIND_OUTCOME));
        if (v == null) {
            return Optional.empty();
        }
        if (v.length < 20 || v[0] != VERSION || (v[9] != 1 && v[9] != 2) || v.length != 20 + Bytes.getShort(v, 18)) {
            throw new CorruptDataException("catalog.volume-settings", db.path(), "volume " + internalId,
                    "outcome value of " + v.length + " bytes, version " + (v.length > 0 ? v[0] : -1));
        }
        String message = new String(v, 20, v.length - 20, StandardCharsets.UTF_8);
        return Optional.of(new Outcome(Bytes.getLong(v, 1), v[9] == 1, Bytes.getLong(v, 10), message.isEmpty() ? null : message));
    }

    /** Records how a backup ended, durably; a message over {@value #MAX_MESSAGE_BYTES} bytes is cut. */
    public void recordOutcome(long internalId, Outcome o) {
        byte[] msg = cut(o.message() == null ? "" : o.message());
        byte[] v = new byte[20 + msg.length];
        v[0] = VERSION;
        Bytes.putLong(v, 1, o.atMillis());
        v[9] = (byte) (o.success() ? 1 : 2);
        Bytes.putLong(v, 10, o.sequence());
        Bytes.putShort(v, 18, msg.length);
        System.arraycopy(msg, 0, v, 20, msg.length);
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, cf, key(internalId, KIND_OUTCOME), v);
            db.write(b, true);
        }
    }

    /** Removes everything kept for a deleted volume (every kind), durably. */
    public void forget(long internalId) {
        try (MetadataBatch b = new MetadataBatch()) {
            for (int kind = 1; kind <= 255; kind++) {
                db.delete(b, cf, key(internalId, (byte) kind));
            }
            db.write(b, true);
        }
    }

    private static byte[] cut(String message) {
        byte[] b = message.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_MESSAGE_BYTES) {
            return b;
        }
        int end = MAX_MESSAGE_BYTES;
        while (end > 0 && (b[end] & 0xc0) == 0x80) {
            end--; // do not split a UTF-8 sequence
        }
        byte[] out = new byte[end];
        System.arraycopy(b, 0, out, 0, end);
        return out;
    }

    static byte[] key(long internalId, byte kind) {
        byte[] k = new byte[9];
        Bytes.putLong(k, 0, internalId);
        k[8] = kind;
        return k;
    }
}
