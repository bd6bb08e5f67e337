package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.StaleMarks;
import org.holdfast.common.io.DurableReplace;

/**
 * A worker's outbox of stale marks (cluster version 8): the blocks its range sweeps freed, PBN and
 * fingerprint, kept in {@code range-data/gc/stale-marks/} until the master answers that every other
 * worker's engine forgot them (STALE_MARKS_TAKEN), so that neither a master restart nor a worker that
 * is down loses one. One file per part of at most {@link ProtocolLimits#MAX_DEDUP_ENTRIES} marks,
 * {@code <part id, 16 hex digits>.marks}, written to a temporary name, forced and renamed (never torn):
 * u32 magic "HFSM", u8 version 1, u32 count, count x (u64 PBN, 32-byte fingerprint), u32 CRC32C of
 * everything before it, big-endian ({@code 13 + 40 count} bytes; golden bytes in StaleMarkOutboxTest).
 * Part ids grow from 1 (the highest file's + 1 after a restart). At most {@link #MAX_PARTS} parts are
 * kept: beyond, a sweep's marks are dropped with a warning (another engine that holds one of those PBNs,
 * which normally none does, may answer it; the owner's grace guard refuses it only while its tombstone
 * lingers); a part that does not read is dropped the same way. The master keeps the same parts for the
 * workers it owes them to ({@link OwedForgets}).
 */
public final class StaleMarkOutbox {
    private static final System.Logger LOG = System.getLogger(StaleMarkOutbox.class.getName());
    static final int MAGIC = 0x4846534D; // "HFSM"
    static final int VERSION = 1;
    static final int MARK = 8 + 32;
    private static final int FIXED = 4 + 1 + 4 + 4;
    private static final String SUFFIX = ".marks";
    /** Parts kept at most (about 670 MB at 65,536 marks each): a master that never takes them must not fill the disk. */
    public static final int MAX_PARTS = 256;

    private final Path dir;
    private final TreeSet<Long> parts = new TreeSet<>(); // guarded by this
    private long nextId; // guarded by this
    private long dropped; // guarded by this
    private volatile Runnable listener = () -> { };

    /** The outbox in {@code dir} (created at the first part); reads the part ids present. */
    public StaleMarkOutbox(Path dir) {
        this.dir = dir;
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                s.map(p -> p.getFileName().toString()).filter(n -> n.matches("[0-9a-f]{16}\\" + SUFFIX))
                        .forEach(n -> parts.add(Long.parseUnsignedLong(n.substring(0, 16), 16)));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list the stale marks in " + dir + ": " + e.getMessage(), e);
            }
        }
        nextId = parts.isEmpty() ? 1 : parts.last() + 1;
    }

    /**
     * Keeps the first {@code count} PBNs of {@code pbns} with their fingerprints (32 bytes each in
     * {@code fps}) as parts, forced to disk when this returns. Called before the blocks' locations go,
     * so a crash in between cannot lose the marks (a mark of a block not freed after all costs the other
     * engines a duplicate, never a wrong answer).
     */
    public synchronized void add(long[] pbns, byte[] fps, int count) {
        for (int from = 0; from < count; from += ProtocolLimits.MAX_DEDUP_ENTRIES) {
            int n = Math.min(ProtocolLimits.MAX_DEDUP_ENTRIES, count - from);
            if (parts.size() >= MAX_PARTS) {
                dropped += n;
                LOG.log(System.Logger.Level.WARNING, "the stale marks outbox " + dir + " holds " + MAX_PARTS + " parts the master has"
                        + " not taken (is it older than cluster version 8, or of an older release with a worker down? upgrade it);"
                        + " " + n + " marks of freed blocks are not kept: another worker's engine that holds one of them (normally"
                        + " none does) may answer it until it loads that container");
                continue;
            }
            long id = nextId++;
            write(id, encode(pbns, fps, from, n));
            parts.add(id);
        }
    }

    /**
     * Keeps the first {@code count} (1 to {@link ProtocolLimits#MAX_DEDUP_ENTRIES}) PBNs of {@code pbns} with their
     * fingerprints as one part, forced to disk when this returns, unless {@code maxParts} are waiting: then
     * nothing is written and this answers false (the caller decides what a full outbox means).
     */
    public synchronized boolean offer(long[] pbns, byte[] fps, int count, int maxParts) {
        if (count < 1 || count > ProtocolLimits.MAX_DEDUP_ENTRIES) {
            throw new IllegalArgumentException("a part holds 1 to " + ProtocolLimits.MAX_DEDUP_ENTRIES + " marks, not " + count);
        }
        if (parts.size() >= maxParts) {
            return false;
        }
        long id = nextId++;
        write(id, encode(pbns, fps, 0, count));
        parts.add(id);
        return true;
    }

    /** Tells the listener (the link's sender) that parts may be waiting: call once the blocks are freed. */
    public void ready() {
        listener.run();
    }

    /** Calls {@code r} on {@link #ready} from now on (one listener: the link up now). */
    void listen(Runnable r) {
        listener = r;
    }

    /** Stops calling {@code r}, if it is still the listener. */
    void unlisten(Runnable r) {
        if (listener == r) {
            listener = () -> { };
        }
    }

    /** The oldest part's id, or 0 if none is waiting. */
    public synchronized long oldest() {
        return parts.isEmpty() ? 0 : parts.first();
    }

    /** The parts waiting, oldest first. */
    public synchronized List<Long> pending() {
        return new ArrayList<>(parts);
    }

    /** Marks dropped since this process opened the outbox (over {@link #MAX_PARTS}, or unreadable). */
    public synchronized long dropped() {
        return dropped;
    }

    /**
     * Part {@code id} as a STALE_MARKS frame, or null if it is gone or not a part (then it is dropped, with a warning).
     *
     * @throws UncheckedIOException the file could not be read (kept: try again later)
     */
    public StaleMarks read(long id) {
        Path f = file(id);
        try {
            return readKept(id);
        } catch (IllegalStateException e) {
            LOG.log(System.Logger.Level.WARNING, "dropping the stale marks part " + f + ": " + e.getMessage() + " (the other workers'"
                    + " engines that hold one of those freed blocks, normally none, may answer it until they load its container)");
            synchronized (this) {
                dropped++;
            }
            delete(id);
            return null;
        }
    }

    /**
     * Part {@code id}, or null if its file is gone; a part that does not read is kept and throws
     * {@link IllegalStateException}: the caller makes what replaces it durable before it goes.
     *
     * @throws UncheckedIOException the file could not be read (kept: try again later)
     */
    StaleMarks readKept(long id) {
        Path f = file(id);
        try {
            return decode(id, Files.readAllBytes(f), f);
        } catch (IOException e) {
            if (!(e instanceof java.nio.file.NoSuchFileException)) {
                throw new UncheckedIOException("cannot read the stale marks part " + f + ": " + e.getMessage(), e);
            }
            synchronized (this) {
                parts.remove(id);
            }
            return null;
        }
    }

    /** Deletes part {@code id} (taken or refused by the master). */
    public synchronized void delete(long id) {
        parts.remove(id);
        try {
            Files.deleteIfExists(file(id));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + file(id) + ": " + e.getMessage(), e);
        }
    }

    private Path file(long id) {
        return dir.resolve(String.format("%016x", id) + SUFFIX);
    }

    private void write(long id, byte[] bytes) {
        Path f = file(id);
        try {
            DurableReplace.write(dir, f.getFileName().toString(), ByteBuffer.wrap(bytes));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the stale marks part " + f + ": " + e.getMessage(), e);
        }
    }

    static byte[] encode(long[] pbns, byte[] fps, int from, int n) {
        ByteBuffer b = ByteBuffer.allocate(FIXED + n * MARK).putInt(MAGIC).put((byte) VERSION).putInt(n);
        for (int i = from; i < from + n; i++) {
            b.putLong(pbns[i]).put(fps, i * 32, 32);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        return b.putInt((int) crc.getValue()).array();
    }

    static StaleMarks decode(long id, byte[] v, Path where) {
        ByteBuffer b = ByteBuffer.wrap(v);
        CRC32C crc = new CRC32C();
        crc.update(v, 0, Math.max(0, v.length - 4));
        int n = v.length >= FIXED ? b.getInt(5) : -1;
        if (v.length < FIXED || b.getInt(0) != MAGIC || b.get(4) != VERSION || n < 1 || n > ProtocolLimits.MAX_DEDUP_ENTRIES
                || v.length != FIXED + (long) n * MARK || b.getInt(v.length - 4) != (int) crc.getValue()) {
            throw new IllegalStateException(where + " is not a stale marks part of version " + VERSION + " (" + v.length
                    + " bytes, damaged or of another release)");
        }
        b.position(9);
        long[] pbns = new long[n];
        byte[] fps = new byte[n * 32];
        for (int i = 0; i < n; i++) {
            pbns[i] = b.getLong();
            if (pbns[i] <= 0) {
                throw new IllegalStateException(where + " names PBN " + Long.toUnsignedString(pbns[i]) + ", no stored block's");
            }
            b.get(fps, i * 32, 32);
        }
        return new StaleMarks(id, n, pbns, fps);
    }
}
