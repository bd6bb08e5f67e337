package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;
import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.holdfast.common.id.Fingerprint;
import org.rocksdb.WriteBatch;

/**
 * Reclaims the space of freed blocks: rewrites each sealed data log whose live share (bytes of
 * records that still have a location, over the log's record bytes) is below a threshold, keeping
 * only live records; a log with no live record is deleted. GC frees a block by deleting its location,
 * so "live" is exactly "has a location". PBNs never change; only locations move.
 *
 * <h2>When</h2>
 * Offline, at startup, before {@link DataStore#open} (no reader or writer can hold the log open).
 * The active log (the durable point's) is never touched.
 *
 * <h2>Crash safety</h2>
 * For log L: (1) write the live records to {@code L.compact} and force it; (2) in one synced batch,
 * point the moved PBNs' locations at their new offsets and set the intent {@code
 * store.compaction-intent = L}; (3) rename {@code L.compact} over L and force the directory; (4) clear
 * the intent. {@link #finishInterrupted} runs first on every start: with an intent, a remaining
 * {@code .compact} file is renamed into place (the locations already name it); without one, stray
 * {@code .compact} files are deleted (the locations still name the old log). A record that fails its
 * checksum stops the compaction of its log, which is then left as it is: compaction never drops data.
 */
public final class Compactor {
    /** Logs whose live share is below this are rewritten. */
    public static final double DEFAULT_THRESHOLD = 0.5;
    static final String META_INTENT = "store.compaction-intent";
    private static final String STORE = "compactor";
    private static final String SUFFIX = ".compact";

    /** What a run did. */
    public record Result(int logsExamined, int logsRewritten, int logsDeleted, long bytesBefore, long bytesAfter,
                         long recordsMoved, int logsSkippedCorrupt) {
    }

    private record Live(long pbn, long offset, int storedLength, byte[] fp) {
    }

    private Compactor() {
    }

    /** Finishes an interrupted compaction, then compacts sealed logs below {@code threshold}. */
    public static Result compact(Path dataDir, MetadataDb db, double threshold) {
        if (!(threshold >= 0 && threshold <= 1)) {
            throw new IllegalArgumentException("compaction threshold must be in 0..1: " + threshold);
        }
        if (!Files.isDirectory(dataDir)) {
            return new Result(0, 0, 0, 0, 0, 0, 0);
        }
        finishInterrupted(dataDir, db);
        byte[] dp = db.get(db.handle(MetadataDb.Column.META), MetadataDb.bytes(FormatVersions.META_DURABLE_POINT));
        if (dp == null || dp.length != 12) {
            return new Result(0, 0, 0, 0, 0, 0, 0);
        }
        int activeId = Bytes.getInt(dp, 0);
        TreeMap<Integer, Path> sealed = new TreeMap<>();
        try (Stream<Path> s = Files.list(dataDir)) {
            s.forEach(p -> {
                int id = DataLog.parseId(p.getFileName().toString());
                if (id >= 0 && id < activeId) {
                    sealed.put(id, p);
                }
            });
        } catch (IOException e) {
            throw StoreException.translate(STORE, dataDir.toString(), null, e);
        }
        Map<Integer, List<Live>> live = new HashMap<>();
        LocationIndex locations = new LocationIndex(db);
        locations.forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            if (sealed.containsKey(logId)) {
                byte[] fp = new byte[Fingerprint.BYTES];
                System.arraycopy(fps, fpOff, fp, 0, Fingerprint.BYTES);
                live.computeIfAbsent(logId, k -> new ArrayList<>()).add(new Live(pbn, offset, storedLength, fp));
            }
            return true;
        });
        int rewritten = 0;
        int deleted = 0;
        int skipped = 0;
        long before = 0;
        long after = 0;
        long moved = 0;
        for (Map.Entry<Integer, Path> e : sealed.entrySet()) {
            long size = size(e.getValue());
            before += size;
            List<Live> records = live.getOrDefault(e.getKey(), List.of());
            long liveBytes = 0;
            for (Live r : records) {
                liveBytes += RECORD_HEADER_BYTES + r.storedLength();
            }
            long recordBytes = Math.max(1, size - DATA_LOG_HEADER_BYTES);
            if (records.isEmpty()) {
                DataLog.deleteFile(e.getValue());
                DataLog.forceDirectory(dataDir);
                deleted++;
                continue;
            }
            if ((double) liveBytes / recordBytes >= threshold) {
                after += size;
                continue;
            }
            long newSize = rewrite(dataDir, db, locations, e.getKey(), e.getValue(), records);
            if (newSize < 0) {
                skipped++;
                after += size;
            } else {
                rewritten++;
                moved += records.size();
                after += newSize;
            }
        }
        return new Result(sealed.size(), rewritten, deleted, before, after, moved, skipped);
    }

    /** Step 0 of every run: complete or discard what a crash left. */
    static void finishInterrupted(Path dataDir, MetadataDb db) {
        long intent = db.metaLong(META_INTENT, -1);
        if (intent >= 0) {
            Path log = dataDir.resolve(DataLog.fileName((int) intent));
            Path tmp = dataDir.resolve(DataLog.fileName((int) intent) + SUFFIX);
            if (Files.exists(tmp)) {
                move(tmp, log);
                DataLog.forceDirectory(dataDir);
            }
            clearIntent(db);
        }
        try (Stream<Path> s = Files.list(dataDir)) {
            for (Path p : s.filter(p -> p.getFileName().toString().endsWith(SUFFIX)).toList()) {
                DataLog.deleteFile(p);
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, dataDir.toString(), null, e);
        }
    }

    private static long rewrite(Path dataDir, MetadataDb db, LocationIndex locations, int id, Path logPath,
                                List<Live> records) {
        records.sort((a, b) -> Long.compare(a.offset(), b.offset()));
        Path tmp = dataDir.resolve(DataLog.fileName(id) + SUFFIX);
        long[] newOffsets = new long[records.size()];
        CRC32C crc = new CRC32C();
        byte[] buf = new byte[RECORD_HEADER_BYTES + FormatVersions.MAX_STORED_BYTES];
        ByteBuffer view = ByteBuffer.wrap(buf);
        long pos;
        try (DataLog old = DataLog.open(logPath, id);
             FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                     StandardOpenOption.WRITE)) {
            // the file header is copied verbatim: same id, same creation time
            try (FileChannel in = FileChannel.open(logPath, StandardOpenOption.READ)) {
                ByteBuffer h = ByteBuffer.wrap(buf, 0, DATA_LOG_HEADER_BYTES);
                while (h.hasRemaining()) {
                    if (in.read(h, h.position()) < 0) {
                        throw new CorruptDataException(STORE, logPath.toString(), null, "header cut short");
                    }
                }
            }
            writeFully(out, ByteBuffer.wrap(buf, 0, DATA_LOG_HEADER_BYTES), 0);
            pos = DATA_LOG_HEADER_BYTES;
            for (int i = 0; i < records.size(); i++) {
                Live r = records.get(i);
                if (r.storedLength() <= 0 || r.storedLength() > FormatVersions.MAX_STORED_BYTES) {
                    Files.deleteIfExists(tmp);
                    return -1;
                }
                int len = RECORD_HEADER_BYTES + r.storedLength();
                old.read(r.offset(), view, len, r.pbn());
                if (RecordFormat.check(buf, r.pbn(), r.storedLength(), crc) != null) {
                    Files.deleteIfExists(tmp);
                    return -1; // leave a damaged log for fsck to report; never drop a record
                }
                writeFully(out, ByteBuffer.wrap(buf, 0, len), pos);
                newOffsets[i] = pos;
                pos += len;
            }
            out.force(true);
        } catch (CorruptDataException e) {
            deleteQuietly(tmp);
            return -1;
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw StoreException.translate(STORE, tmp.toString(), null, e);
        }
        DataLog.forceDirectory(dataDir);
        try (WriteBatch batch = new WriteBatch()) {
            for (int i = 0; i < records.size(); i++) {
                Live r = records.get(i);
                locations.put(batch, r.pbn(), id, newOffsets[i], r.storedLength(), r.fp(), 0);
            }
            db.putMetaLong(batch, META_INTENT, id);
            db.write(batch, true);
        }
        move(tmp, logPath);
        DataLog.forceDirectory(dataDir);
        clearIntent(db);
        return pos;
    }

    private static void clearIntent(MetadataDb db) {
        try (WriteBatch batch = new WriteBatch()) {
            db.delete(batch, db.handle(MetadataDb.Column.META), MetadataDb.bytes(META_INTENT));
            db.write(batch, true);
        }
    }

    private static void move(Path from, Path to) {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw StoreException.translate(STORE, to.toString(), null, e);
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw StoreException.translate(STORE, p.toString(), null, e);
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a stray .compact file is removed at the next start
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            pos += ch.write(b, pos);
        }
    }
}
