package org.holdfast.server.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.holdfast.common.protocol.SealedLogReport;

/**
 * What a master recorded of one worker's sealed, uploaded data logs (object key, sealed size, SHA-256
 * of the object's bytes), against which its {@link RangeCopy} checks the bucket: with records, only a
 * recorded log whose object has that size and digest is read; a recorded log missing from the bucket, a
 * log that does not match and a log the master has no record of are reported, and their blocks are
 * unavailable, never served. {@link #NONE} (no record, as for a worker that reports none) reads the
 * bucket as it is, as before records existed.
 */
public final class SealedLogs {
    /** No record: the copy trusts the bucket's listing (each record is still hashed). */
    public static final SealedLogs NONE = new SealedLogs(List.of(), false);

    /** One sealed log: its object key, its size in bytes and the SHA-256 of those bytes. */
    public record Sealed(String key, long size, byte[] sha256) {
        public Sealed {
            if (size < 0 || sha256.length != 32) {
                throw new IllegalArgumentException("a sealed log has a size of 0 or more and a 32-byte SHA-256, got " + size + " and "
                        + sha256.length + " bytes");
            }
            sha256 = sha256.clone();
        }

        /** Worker {@code worker}'s log {@code l} as the master records and reports it, under its key in the bucket. */
        public static Sealed of(long worker, SealedLogReport.Sealed l) {
            return new Sealed(WorkerKeys.logKey(worker, l.epoch(), l.logId(), l.logEpoch()), l.size(), l.sha256());
        }

        @Override
        public byte[] sha256() {
            return sha256.clone();
        }

        String describe() {
            return size + " bytes, SHA-256 " + HexFormat.of().formatHex(sha256);
        }
    }

    private final Map<String, Sealed> byKey = new TreeMap<>();
    private final boolean complete;

    /**
     * The records {@code sealed} (one per object key); {@code complete}: the worker holds a digest of every
     * log it reported (else logs it uploaded before it kept digests have none, and are read unchecked).
     */
    public SealedLogs(List<Sealed> sealed, boolean complete) {
        for (Sealed s : sealed) {
            byKey.put(s.key(), s);
        }
        this.complete = complete;
    }

    /** Complete records {@code sealed}. */
    public SealedLogs(List<Sealed> sealed) {
        this(sealed, true);
    }

    /** Whether the master holds any record for the worker (none: the bucket is read as listed). */
    public boolean recorded() {
        return !byKey.isEmpty() || complete;
    }

    /** The recorded object keys, in key order. */
    public List<String> keys() {
        return List.copyOf(byKey.keySet());
    }

    /** Whether every log the worker reported has a record (else a log without one is read unchecked). */
    public boolean complete() {
        return complete;
    }

    /**
     * The logs a copy of worker {@code worker} reads, in log id order: {@code planned} (the takeover rule's
     * pick from the bucket {@code listing}) without records. With records, per log id the recorded log if
     * the bucket holds it; else a newer copy of that log id in the listing (a compaction the worker had not
     * reported yet: read unchecked, and reported); else none (reported missing). A planned log of a log id
     * with a record that is not the recorded one is not read (reported); one of a log id without a record
     * is not read either if the records are complete (reported: planted, or left over), else read unchecked.
     */
    List<String> toRead(long worker, List<String> planned, List<String> listing, Consumer<String> problems) {
        return toRead(worker, planned, listing, problems, problems, !complete);
    }

    /**
     * As {@link #toRead(long, List, List, Consumer)}, with the problems split: {@code lost} hears of a
     * recorded log missing from the bucket (its blocks would be lost), {@code unchecked} of a log read
     * without a record, a log left unread for the recorded one and a record naming no log key; a planned log
     * of a log id without a record is read (unchecked) if {@code readUnrecorded}.
     */
    List<String> toRead(long worker, List<String> planned, List<String> listing, Consumer<String> lost, Consumer<String> unchecked,
                        boolean readUnrecorded) {
        if (!recorded()) {
            return planned;
        }
        Set<String> listed = new HashSet<>(listing);
        TreeMap<Long, String> byLogId = new TreeMap<>();
        TreeMap<Long, Sealed> recordOf = new TreeMap<>();
        for (Sealed s : byKey.values()) {
            long[] eil = WorkerKeys.logOf(worker, s.key());
            if (eil == null) {
                unchecked.accept("the master's record of worker " + worker + "'s log " + s.key() + " names no log key of that worker:"
                        + " ignored");
                continue;
            }
            recordOf.put(eil[1], s);
            if (listed.contains(s.key())) {
                byLogId.put(eil[1], s.key());
                continue;
            }
            String newer = null;
            long newest = eil[2];
            for (String k : listing) {
                long[] o = WorkerKeys.logOf(worker, k);
                if (o != null && o[1] == eil[1] && o[2] > newest) {
                    newest = o[2];
                    newer = k;
                }
            }
            if (newer != null) {
                byLogId.put(eil[1], newer);
                unchecked.accept("worker " + worker + "'s log " + s.key() + " (sealed at " + s.describe() + ") is recorded on the"
                        + " master but gone from the bucket, which holds a newer copy " + newer + " the worker never reported (a"
                        + " compaction it had not told the master of yet): that copy is read unchecked");
            } else {
                lost.accept("worker " + worker + "'s log " + s.key() + " (sealed at " + s.describe() + ") is recorded on the"
                        + " master but missing from the bucket: the blocks stored in it are unavailable");
            }
        }
        for (String k : planned) {
            long[] eil = WorkerKeys.logOf(worker, k);
            if (eil == null || k.equals(byLogId.get(eil[1]))) {
                continue;
            }
            if (recordOf.containsKey(eil[1]) || !readUnrecorded) {
                unchecked.accept("worker " + worker + "'s log " + k + " is in the bucket but the master has no record of the worker"
                        + " sealing it (planted, or left over): it is not read, and no block is served from it");
            } else {
                byLogId.put(eil[1], k); // uploaded before the worker kept digests (or, in a takeover, after its last report): unchecked
                if (complete) {
                    unchecked.accept("worker " + worker + "'s log " + k + " is in the bucket but the master has no record of the"
                            + " worker sealing it (uploaded after its last report, or planted): it is adopted unchecked");
                }
            }
        }
        return new ArrayList<>(byLogId.values());
    }

    /**
     * Why the downloaded object {@code file} of log {@code key} is not what the worker sealed (size first,
     * then SHA-256; expected vs found), or null if it is, or if the master holds no record of it.
     */
    String mismatch(String key, Path file) {
        Sealed s = byKey.get(key);
        if (s == null) {
            return null;
        }
        try {
            long size = Files.size(file);
            if (size != s.size()) {
                return "log " + key + " is " + size + " bytes in the bucket, but the worker sealed it at " + s.describe();
            }
            return mismatch(key, size, sha256(file));
        } catch (IOException e) {
            throw StoreException.translate("range-copy", file.toString(), null, e);
        }
    }

    /** As {@link #mismatch(String, Path)}, for an object of {@code size} bytes with SHA-256 {@code found} (null: the size only). */
    String mismatch(String key, long size, byte[] found) {
        Sealed s = byKey.get(key);
        if (s == null) {
            return null;
        }
        if (size != s.size()) {
            return "log " + key + " is " + size + " bytes in the bucket, but the worker sealed it at " + s.describe();
        }
        if (found != null && !MessageDigest.isEqual(found, s.sha256)) {
            return "log " + key + " in the bucket has SHA-256 " + HexFormat.of().formatHex(found) + ", but the worker sealed it at "
                    + s.describe();
        }
        return null;
    }

    /** The size the master recorded for object {@code key}, or -1 if it holds no record of it. */
    long recordedSize(String key) {
        Sealed s = byKey.get(key);
        return s == null ? -1 : s.size();
    }

    /** A new SHA-256 digest. */
    static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java 17 runtime has SHA-256", e);
        }
    }

    /** The SHA-256 of {@code file}'s bytes. */
    public static byte[] sha256(Path file) throws IOException {
        MessageDigest md = newSha256();
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        return md.digest();
    }
}
