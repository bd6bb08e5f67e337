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
    public static final SealedLogs NONE = new SealedLogs(List.of());

    /** One sealed log: its object key, its size in bytes and the SHA-256 of those bytes. */
    public record Sealed(String key, long size, byte[] sha256) {
        public Sealed {
            if (size < 0 || sha256.length != 32) {
                throw new IllegalArgumentException("a sealed log has a size of 0 or more and a 32-byte SHA-256, got " + size + " and "
                        + sha256.length + " bytes");
            }
            sha256 = sha256.clone();
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

    /** The records {@code sealed} (one per object key). */
    public SealedLogs(List<Sealed> sealed) {
        for (Sealed s : sealed) {
            byKey.put(s.key(), s);
        }
    }

    /** Whether the master holds any record for the worker (none: the bucket is read as listed). */
    public boolean recorded() {
        return !byKey.isEmpty();
    }

    /**
     * The logs a copy of worker {@code worker} reads: {@code planned} (the takeover rule's pick from the
     * listing) without records; with records, every recorded log the bucket {@code listing} holds, in log
     * id order. Tells {@code problems} of each recorded log missing from the listing and of each planned
     * log without a record (not read: a log the worker never reported sealing, planted or left over).
     */
    List<String> toRead(long worker, List<String> planned, List<String> listing, Consumer<String> problems) {
        if (!recorded()) {
            return planned;
        }
        Set<String> listed = new HashSet<>(listing);
        TreeMap<Long, String> byLogId = new TreeMap<>();
        for (Sealed s : byKey.values()) {
            long e = WorkerKeys.epochOf(worker, s.key());
            long[] ide = e < 1 ? null : WorkerKeys.log(worker, e, s.key());
            if (ide == null) {
                problems.accept("the master's record of worker " + worker + "'s log " + s.key() + " names no log key of that worker:"
                        + " ignored");
            } else if (!listed.contains(s.key())) {
                problems.accept("worker " + worker + "'s log " + s.key() + " (sealed at " + s.describe() + ") is recorded on the"
                        + " master but missing from the bucket: the blocks stored in it are unavailable");
            } else {
                byLogId.put(ide[0], s.key());
            }
        }
        for (String k : planned) {
            if (!byKey.containsKey(k)) {
                problems.accept("worker " + worker + "'s log " + k + " is in the bucket but the master has no record of the worker"
                        + " sealing it (planted, or left over): it is not read, and no block is served from it");
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
            byte[] found = sha256(file);
            if (!MessageDigest.isEqual(found, s.sha256)) {
                return "log " + key + " in the bucket has SHA-256 " + HexFormat.of().formatHex(found) + ", but the worker sealed it at "
                        + s.describe();
            }
            return null;
        } catch (IOException e) {
            throw StoreException.translate("range-copy", file.toString(), null, e);
        }
    }

    /** The SHA-256 of {@code file}'s bytes. */
    public static byte[] sha256(Path file) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java 17 runtime has SHA-256", e);
        }
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        return md.digest();
    }
}
