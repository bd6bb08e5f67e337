package org.holdfast.server.engine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.holdfast.server.container.StalePbns;
import org.holdfast.server.store.StoreException;

/**
 * Lazy deletion of freed blocks (thesis 5.7): the PBNs that GC freed, each with a sequence number,
 * kept until every container has been purged of them.
 *
 * <p>The thesis marks "the container holding the fingerprint" stale. Finding that container would
 * need the full fingerprint index the engine exists to avoid, so the mark is kept per PBN instead:
 * every container remembers the sequence number it was last purged through, and one loaded with an
 * older number purges the marked PBNs before it is used. A lookup never hands out a marked PBN
 * either, which closes the window where a container in memory has not been purged yet.
 *
 * <p>Durability: a mark is appended to {@code stale.log} and forced before {@link #mark} returns,
 * because a mark lost in a crash could let a restarted engine name a freed block as a duplicate.
 * Each log record is pbn u64, seq u64, CRC32C u32 (big-endian); reading stops at the first torn
 * record; a record with PBN 0 only carries the sequence number across a compaction.
 * {@link #retireThrough} drops marks every container has been purged of and rewrites the log.
 */
public final class StaleMarks implements StalePbns, AutoCloseable {
    private static final int RECORD_BYTES = 20;

    private final Path log;
    private FileChannel channel;
    private long[] keys = new long[64];
    private long[] seqs = new long[64];
    private int size;
    private volatile int published;
    private volatile long lastSeq;
    private final ByteBuffer buf = ByteBuffer.allocate(RECORD_BYTES * 256).order(ByteOrder.BIG_ENDIAN);

    /** Opens (or creates) the marks in {@code log}; null keeps them in memory only (tests, benchmarks). */
    public StaleMarks(Path log) {
        this.log = log;
        if (log != null) {
            load();
            openForAppend();
        }
    }

    private void load() {
        if (!Files.exists(log)) {
            return;
        }
        try {
            long len = Files.size(log);
            if (len > (long) Integer.MAX_VALUE - 64) {
                throw new StoreException("stale-marks", log.toString(), null, "log larger than 2 GiB", null);
            }
            byte[] data = Files.readAllBytes(log);
            ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.BIG_ENDIAN);
            int good = 0;
            CRC32C crc = new CRC32C();
            while (b.remaining() >= RECORD_BYTES) {
                int at = b.position();
                long pbn = b.getLong();
                long seq = b.getLong();
                int sum = b.getInt();
                crc.reset();
                crc.update(data, at, 16);
                if (sum != (int) crc.getValue()) {
                    break;
                }
                if (pbn != 0) {
                    put(pbn, seq); // pbn 0 records only carry the sequence across a compaction
                }
                lastSeq = Math.max(lastSeq, seq);
                good = b.position();
            }
            if (good != data.length) {
                try (FileChannel ch = FileChannel.open(log, StandardOpenOption.WRITE)) {
                    ch.truncate(good);
                    ch.force(true);
                }
            }
            published = size;
        } catch (IOException e) {
            throw StoreException.translate("stale-marks", log.toString(), null, e);
        }
    }

    private void openForAppend() {
        try {
            channel = FileChannel.open(log, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw StoreException.translate("stale-marks", log.toString(), null, e);
        }
    }

    /** Marks {@code pbns[0..n)} as freed; durable when it returns. */
    public synchronized void mark(long[] pbns, int n) {
        CRC32C crc = new CRC32C();
        try {
            for (int i = 0; i < n; i++) {
                long seq = lastSeq + 1;
                put(pbns[i], seq);
                lastSeq = seq;
                if (channel != null) {
                    if (buf.remaining() < RECORD_BYTES) {
                        drain();
                    }
                    int at = buf.position();
                    buf.putLong(pbns[i]).putLong(seq);
                    crc.reset();
                    crc.update(buf.array(), at, 16);
                    buf.putInt((int) crc.getValue());
                }
            }
            if (channel != null) {
                drain();
                channel.force(false);
            }
        } catch (IOException e) {
            throw StoreException.translate("stale-marks", String.valueOf(log), null, e);
        }
        published = size;
    }

    private void drain() throws IOException {
        buf.flip();
        while (buf.hasRemaining()) {
            channel.write(buf);
        }
        buf.clear();
    }

    private void put(long pbn, long seq) {
        if ((size + 1) * 2 > keys.length) {
            rehash(keys.length * 2);
        }
        int mask = keys.length - 1;
        int i = slot(pbn, mask);
        while (keys[i] != 0) {
            if (keys[i] == pbn) {
                seqs[i] = seq;
                return;
            }
            i = (i + 1) & mask;
        }
        keys[i] = pbn;
        seqs[i] = seq;
        size++;
    }

    private static int slot(long pbn, int mask) {
        return (int) ((pbn * 0x9E3779B97F4A7C15L) >>> 40) & mask;
    }

    private void rehash(int capacity) {
        long[] ok = keys;
        long[] os = seqs;
        keys = new long[capacity];
        seqs = new long[capacity];
        size = 0;
        for (int i = 0; i < ok.length; i++) {
            if (ok[i] != 0) {
                put(ok[i], os[i]);
            }
        }
    }

    @Override
    public long lastSeq() {
        return lastSeq;
    }

    /** True if no mark is pending: lookups skip the check entirely. */
    public boolean isEmpty() {
        return published == 0;
    }

    @Override
    public synchronized boolean contains(long pbn) {
        if (size == 0 || pbn == 0) {
            return false;
        }
        int mask = keys.length - 1;
        int i = slot(pbn, mask);
        while (keys[i] != 0) {
            if (keys[i] == pbn) {
                return true;
            }
            i = (i + 1) & mask;
        }
        return false;
    }

    /** Marks pending. */
    public synchronized int size() {
        return size;
    }

    /** Drops the marks with sequence &lt;= {@code seq} (every container is purged of them) and compacts the log. */
    public synchronized int retireThrough(long seq) {
        int before = size;
        long[] ok = keys;
        long[] os = seqs;
        keys = new long[Math.max(64, Integer.highestOneBit(Math.max(1, before)) * 2)];
        seqs = new long[keys.length];
        size = 0;
        for (int i = 0; i < ok.length; i++) {
            if (ok[i] != 0 && os[i] > seq) {
                put(ok[i], os[i]);
            }
        }
        int retired = before - size;
        if (retired > 0 && log != null) {
            rewriteLog();
        }
        published = size;
        return retired;
    }

    private void rewriteLog() {
        Path tmp = log.resolveSibling(log.getFileName() + ".tmp");
        try {
            channel.close();
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                FileChannel saved = channel;
                channel = ch;
                CRC32C crc = new CRC32C();
                // Keep the sequence even when every mark is retired: containers remember it.
                buf.putLong(0).putLong(lastSeq);
                crc.update(buf.array(), 0, 16);
                buf.putInt((int) crc.getValue());
                for (int i = 0; i < keys.length; i++) {
                    if (keys[i] != 0) {
                        if (buf.remaining() < RECORD_BYTES) {
                            drain();
                        }
                        int at = buf.position();
                        buf.putLong(keys[i]).putLong(seqs[i]);
                        crc.reset();
                        crc.update(buf.array(), at, 16);
                        buf.putInt((int) crc.getValue());
                    }
                }
                drain();
                ch.force(true);
                channel = saved;
            }
            Files.move(tmp, log, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw StoreException.translate("stale-marks", log.toString(), null, e);
        }
        openForAppend();
    }

    /** Bytes held in memory. */
    public synchronized long memoryBytes() {
        return keys.length * 16L;
    }

    @Override
    public synchronized void close() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                throw StoreException.translate("stale-marks", log.toString(), null, e);
            }
            channel = null;
        }
    }
}
