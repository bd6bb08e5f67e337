package org.holdfast.server.catalog;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * Marks of large commits under way, so that a crash before their switch leaves nothing visible.
 * A commit whose map entries do not fit one batch writes them in chunks before its final, synced
 * batch; its first chunk carries {@code commit/i + u64 volume internal id → u64 sequence} (meta
 * column family, big-endian), the final batch deletes it. The catalog's write-ahead log keeps
 * writes in order, so a surviving chunk implies a surviving mark. {@link #removeLeftovers} (before
 * the first commit of a process, and after a commit failed midway) deletes, for each mark whose
 * sequence the volume never reached, every map entry born after the volume's latest snapshot, then
 * the mark: one pass over that volume's map, only after such a crash.
 */
final class CommitIntents {
    private static final byte[] PREFIX = "commit/i".getBytes(StandardCharsets.US_ASCII);
    /** Deletions per batch while removing leftovers. */
    private static final int DELETE_BATCH = 65_536;

    private final Catalog catalog;

    CommitIntents(Catalog catalog) {
        this.catalog = catalog;
    }

    private static byte[] key(long volume) {
        byte[] k = new byte[PREFIX.length + 8];
        System.arraycopy(PREFIX, 0, k, 0, PREFIX.length);
        Bytes.putLong(k, PREFIX.length, volume);
        return k;
    }

    /** Adds the mark of volume {@code volume}'s commit of {@code sequence} to {@code batch}. */
    void put(MetadataBatch batch, long volume, long sequence) {
        byte[] v = new byte[8];
        Bytes.putLong(v, 0, sequence);
        catalog.db().put(batch, MetadataDb.Column.META, key(volume), v);
    }

    /** Adds the removal of volume {@code volume}'s mark to {@code batch}. */
    void delete(MetadataBatch batch, long volume) {
        catalog.db().delete(batch, MetadataDb.Column.META, key(volume));
    }

    /** The marks present: volume internal id to sequence. */
    Map<Long, Long> all() {
        Map<Long, Long> out = new HashMap<>();
        try (CheckedIterator it = catalog.db().iterator(MetadataDb.Column.META)) {
            for (it.seek(PREFIX); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (k.length != PREFIX.length + 8 || !java.util.Arrays.equals(k, 0, PREFIX.length, PREFIX, 0, PREFIX.length)) {
                    break;
                }
                byte[] v = it.value();
                if (v.length != 8) {
                    throw new CorruptDataException("catalog", catalog.db().path(), "commit mark", "value of " + v.length + " bytes");
                }
                out.put(Bytes.getLong(k, PREFIX.length), Bytes.getLong(v, 0));
            }
        }
        return out;
    }

    /** Removes what commits that never reached their switch left behind; answers how many map entries went. */
    long removeLeftovers() {
        Map<Long, Long> marks = all();
        if (marks.isEmpty()) {
            return 0;
        }
        Map<Long, Long> latest = new HashMap<>();
        for (VolumeRecord v : catalog.volumes()) {
            latest.put(v.internalId(), v.latestSequence());
        }
        long removed = 0;
        for (Map.Entry<Long, Long> m : marks.entrySet()) {
            long volume = m.getKey();
            long committed = latest.getOrDefault(volume, 0L);
            long[] n = {0};
            MetadataBatch[] batch = {new MetadataBatch()};
            try {
                catalog.forEachMapEntry(volume, (lbn, birth, pbn) -> {
                    if (birth > committed) {
                        catalog.deleteMapEntry(batch[0], volume, lbn, birth);
                        if (++n[0] % DELETE_BATCH == 0) {
                            catalog.db().write(batch[0], false);
                            batch[0].close();
                            batch[0] = new MetadataBatch();
                        }
                    }
                    return true;
                });
                delete(batch[0], volume);
                catalog.write(batch[0]); // synced: the deletions before it are durable with it
            } finally {
                batch[0].close();
            }
            removed += n[0];
        }
        return removed;
    }
}
