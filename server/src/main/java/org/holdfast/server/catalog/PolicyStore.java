package org.holdfast.server.catalog;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.rocksdb.ColumnFamilyHandle;

/**
 * Named retention policies and which volume is assigned to which, in the {@code policies} column
 * family. Two kinds of key, told apart by their first byte (layout in docs/architecture.md):
 * <ul>
 * <li>{@code 'p'} + name (UTF-8): u8 version 1, u16 length + policy text (UTF-8, as the user wrote it
 *     after normalising), u16 length + description (UTF-8), u64 created ms, u64 updated ms;</li>
 * <li>{@code 'a'} + u64 volume internal id (big-endian): u8 version 1, u16 length + policy name.</li>
 * </ul>
 * Assignments are keyed by the volume's internal id, not its name, so a volume deleted and created
 * again under the same name does not inherit the old assignment; a deleted volume's assignment is
 * ignored by readers that check the volume still exists. Writes go into the caller's batch, so an
 * assignment changes in the same batch as the volume's policy text (gc records).
 */
public final class PolicyStore {
    private static final String STORE = "policies";
    private static final byte POLICY = 'p';
    private static final byte ASSIGNMENT = 'a';
    private static final int VERSION = 1;
    /** Longest name, policy text or description stored (bytes); longer values are refused before writing. */
    public static final int MAX_STRING_BYTES = 1024;

    /** A named policy as stored. */
    public record Entry(String name, String policy, String description, long createdMillis, long updatedMillis) {
    }

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public PolicyStore(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(Column.POLICIES);
    }

    /** The named policy, if stored. */
    public Optional<Entry> policy(String name) {
        byte[] v = db.get(cf, policyKey(name));
        return v == null ? Optional.empty() : Optional.of(decodePolicy(name, v));
    }

    /** Every stored named policy, by name. */
    public List<Entry> policies() {
        List<Entry> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(new byte[] {POLICY}); it.isValid() && it.key()[0] == POLICY; it.next()) {
                byte[] k = it.key();
                out.add(decodePolicy(new String(k, 1, k.length - 1, StandardCharsets.UTF_8), it.value()));
            }
        }
        return out;
    }

    /** Adds writing {@code e} to {@code batch}. */
    public void putPolicy(MetadataBatch batch, Entry e) {
        byte[] text = utf8(e.policy());
        byte[] desc = utf8(e.description() == null ? "" : e.description());
        ByteBuffer b = ByteBuffer.allocate(1 + 2 + text.length + 2 + desc.length + 16);
        b.put((byte) VERSION).putShort((short) text.length).put(text).putShort((short) desc.length).put(desc)
                .putLong(e.createdMillis()).putLong(e.updatedMillis());
        db.put(batch, cf, policyKey(e.name()), b.array());
    }

    /** Adds deleting the named policy to {@code batch}. */
    public void deletePolicy(MetadataBatch batch, String name) {
        db.delete(batch, cf, policyKey(name));
    }

    /** The name the volume is assigned to, if any. */
    public Optional<String> assignment(long volumeInternalId) {
        byte[] v = db.get(cf, assignmentKey(volumeInternalId));
        return v == null ? Optional.empty() : Optional.of(decodeAssignment(volumeInternalId, v));
    }

    /** Every assignment: volume internal id to policy name (deleted volumes included: check them). */
    public Map<Long, String> assignments() {
        Map<Long, String> out = new TreeMap<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(new byte[] {ASSIGNMENT}); it.isValid() && it.key()[0] == ASSIGNMENT; it.next()) {
                byte[] k = it.key();
                if (k.length != 9) {
                    throw new CorruptDataException(STORE, db.path(), "assignment key", "length " + k.length + ", expected 9");
                }
                long id = ByteBuffer.wrap(k, 1, 8).getLong();
                out.put(id, decodeAssignment(id, it.value()));
            }
        }
        return out;
    }

    /** Adds assigning the volume to {@code name} to {@code batch}. */
    public void putAssignment(MetadataBatch batch, long volumeInternalId, String name) {
        byte[] n = utf8(name);
        db.put(batch, cf, assignmentKey(volumeInternalId),
                ByteBuffer.allocate(3 + n.length).put((byte) VERSION).putShort((short) n.length).put(n).array());
    }

    /** Adds removing the volume's assignment (if any) to {@code batch}. */
    public void deleteAssignment(MetadataBatch batch, long volumeInternalId) {
        db.delete(batch, cf, assignmentKey(volumeInternalId));
    }

    /** Writes {@code batch} synced (the caller owns and closes it). */
    public void write(MetadataBatch batch) {
        db.write(batch, true);
    }

    private Entry decodePolicy(String name, byte[] v) {
        try {
            ByteBuffer b = ByteBuffer.wrap(v);
            int version = b.get() & 0xff;
            if (version != VERSION) {
                throw new IllegalArgumentException("unknown version " + version);
            }
            String text = string(b);
            String desc = string(b);
            long created = b.getLong();
            long updated = b.getLong();
            if (b.hasRemaining()) {
                throw new IllegalArgumentException(b.remaining() + " trailing bytes");
            }
            return new Entry(name, text, desc, created, updated);
        } catch (IllegalArgumentException | BufferUnderflowException e) {
            throw new CorruptDataException(STORE, db.path(), "policy:" + name, String.valueOf(e.getMessage()));
        }
    }

    private String decodeAssignment(long volume, byte[] v) {
        try {
            ByteBuffer b = ByteBuffer.wrap(v);
            int version = b.get() & 0xff;
            if (version != VERSION) {
                throw new IllegalArgumentException("unknown version " + version);
            }
            String name = string(b);
            if (b.hasRemaining()) {
                throw new IllegalArgumentException(b.remaining() + " trailing bytes");
            }
            return name;
        } catch (IllegalArgumentException | BufferUnderflowException e) {
            throw new CorruptDataException(STORE, db.path(), "assignment:" + volume, String.valueOf(e.getMessage()));
        }
    }

    private static String string(ByteBuffer b) {
        int n = b.getShort() & 0xffff;
        if (n > MAX_STRING_BYTES || n > b.remaining()) {
            throw new IllegalArgumentException("string length " + n + " exceeds " + Math.min(MAX_STRING_BYTES, b.remaining()));
        }
        byte[] s = new byte[n];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("longer than " + MAX_STRING_BYTES + " bytes: '" + s.substring(0, 40) + "...'");
        }
        return b;
    }

    private static byte[] policyKey(String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        byte[] k = new byte[1 + n.length];
        k[0] = POLICY;
        System.arraycopy(n, 0, k, 1, n.length);
        return k;
    }

    private static byte[] assignmentKey(long volume) {
        return ByteBuffer.allocate(9).put(ASSIGNMENT).putLong(volume).array();
    }
}
