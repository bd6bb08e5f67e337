package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.Fingerprint;

/**
 * Refuses a restored catalog over data logs it does not describe (another appliance's backup over
 * this data directory): a few raw blocks each local log is named for must hash to the fingerprint
 * their location holds. Without this, PBN numbers alone would tie the catalog's snapshots to this
 * store's blocks, and the GC metadata rebuilt from it would free this store's own blocks. A mismatch
 * or two (bit rot) does not refuse; most checked blocks being other bytes does.
 */
final class RestoredCatalogOwnership {
    private static final int SAMPLES_PER_LOG = 8;

    private RestoredCatalogOwnership() {
    }

    /** Checks {@code db}'s locations against the local log files {@code local}; throws if they are another store's. */
    static void check(MetadataDb db, TreeMap<Integer, Path> local) {
        Map<Integer, List<long[]>> samples = new HashMap<>(); // log id -> {pbn, offset, stored length}
        Map<Long, byte[]> fps = new HashMap<>();
        new LocationIndex(db).forEachLocation((pbn, logId, offset, location, f, fpOff) -> {
            if (!local.containsKey(logId) || FrameFormat.isMember(location) || zero(f, fpOff)) {
                return true;
            }
            List<long[]> l = samples.computeIfAbsent(logId, k -> new ArrayList<>());
            if (l.size() < SAMPLES_PER_LOG) {
                l.add(new long[] {pbn, offset, location});
                fps.put(pbn, Arrays.copyOfRange(f, fpOff, fpOff + Fingerprint.BYTES));
            }
            return true;
        });
        long matched = 0;
        long other = 0;
        for (Map.Entry<Integer, List<long[]>> e : samples.entrySet()) {
            Path file = local.get(e.getKey());
            Map<Long, long[]> at = new HashMap<>(); // pbn -> {offset, stored}, where the record is now
            boolean walked = false;
            for (long[] s : e.getValue()) {
                long[] where = {s[1], s[2]};
                Boolean same = sameBytes(file, s[0], where[0], (int) where[1], fps.get(s[0]));
                if (same == null && !walked) {
                    walked = true; // compaction may have moved it: find the record by its header
                    LogRecords.walk(file, (pbn, offset, lengthField) -> {
                        if (fps.containsKey(pbn) && !FrameFormat.isMember(lengthField)) {
                            at.put(pbn, new long[] {offset, lengthField});
                        }
                    });
                }
                if (same == null && at.containsKey(s[0])) {
                    long[] now = at.get(s[0]);
                    same = sameBytes(file, s[0], now[0], (int) now[1], fps.get(s[0]));
                }
                if (same != null) {
                    if (same) {
                        matched++;
                    } else {
                        other++;
                    }
                }
            }
        }
        if (other > matched) {
            throw new CatalogRestoreRefusedException(db.path(), "this catalog backup is of another store: " + other
                    + " of " + (other + matched) + " blocks it names in the data logs here hold other bytes than their fingerprints;"
                    + " restore the backup of the server whose data directory this is (or give its own data directory)");
        }
    }

    /** Whether the raw record of {@code pbn} at {@code offset} holds the block of {@code fp}; null if it is no sound raw record of it. */
    private static Boolean sameBytes(Path file, long pbn, long offset, int stored, byte[] fp) {
        if (stored <= 0 || stored > FormatVersions.MAX_STORED_BYTES) {
            return null;
        }
        byte[] rec = new byte[RECORD_HEADER_BYTES + stored];
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            if (offset + rec.length > ch.size()) {
                return null;
            }
            ByteBuffer buf = ByteBuffer.wrap(rec);
            while (buf.hasRemaining() && ch.read(buf, offset + buf.position()) >= 0) {
                // a positional read may return fewer bytes
            }
        } catch (IOException e) {
            throw StoreException.translate("catalog-restore", file.toString(), null, e);
        }
        if (RecordFormat.check(rec, pbn, stored, new CRC32C()) != null || RecordFormat.codec(rec) != FormatVersions.CODEC_RAW
                || RecordFormat.rawLength(rec) != stored) {
            return null;
        }
        byte[] digest = new byte[Fingerprint.BYTES];
        BlockHasher.forCurrentThread().sha256(rec, RECORD_HEADER_BYTES, stored, digest, 0);
        return Arrays.equals(digest, fp);
    }

    private static boolean zero(byte[] f, int off) {
        for (int i = 0; i < Fingerprint.BYTES; i++) {
            if (f[off + i] != 0) {
                return false;
            }
        }
        return true;
    }

}
