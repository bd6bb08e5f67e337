package org.holdfast.server.engine;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.zip.CRC32C;
import org.holdfast.server.store.StoreException;

/**
 * The Bloom filter chain (BFC, thesis 5.3): the fingerprints seen in the last few periods, one
 * filter per period, oldest dropped whole when a new period starts. That is how it handles both
 * deletion (old fingerprints age out with their filter) and growth (more periods, more filters).
 *
 * <p>All filters use the same bit positions, taken straight from the fingerprint's own bits (a
 * SHA-256 is already uniform, so no hashing is needed): word 1 picks a 512-bit block, words 2 and 3
 * give up to 14 bit positions of 9 bits inside it. Keeping all k bits of a fingerprint in one cache
 * line (a blocked Bloom filter) makes an insert one cache miss; the price is a slightly higher
 * false-positive rate than an unblocked filter of the same size, which {@link #falsePositiveRate}
 * estimates from the measured fill: a probe of one filter is a false positive with probability
 * fill^k, and of the chain with 1 - prod(1 - fill_i^k).
 *
 * <p>Sizing: each filter has the smallest power of two of bits, at least
 * {@code -n ln p / (ln 2)^2} for n = expected new fingerprints per period and p = target rate, and
 * k = round(m/n ln 2), between 1 and 14.
 *
 * <p>Persistence: {@code bfc/%016x.bloom} per period (magic "HFBF", version 3, period, bit count, k,
 * inserted count, the bits coded by {@link BloomBitsCoder}, CRC32C; version 1 files, with the bits
 * raw, and version 2, the bits as one zstd frame, are still read). {@link #flush} writes only the
 * filters that changed since their file was written or read (in practice today's), so the flush
 * after each commit codes one filter, not every period's. A torn or foreign file is
 * skipped: the chain only guides the fallback lookup, so losing it costs some efficiency, never
 * correctness. Reads race benignly with inserts; inserts are serialized.
 */
public final class BloomFilterChain implements AutoCloseable {
    /** "HFBF". */
    public static final int MAGIC = 0x48464246;
    /** File format version written: a coding byte, then Rice-coded gaps or a zstd frame. */
    public static final int VERSION = 3;
    /** The first format, still read: the bits as they are. */
    static final int VERSION_1 = 1;
    /** The second format, still read: the bits as one zstd frame. */
    static final int VERSION_2 = 2;
    private static final int HEADER_BYTES = 48;
    /** Largest filter accepted from disk (bits). */
    public static final long MAX_BITS = 1L << 36;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final Path dir;
    private final Clock clock;
    private final long periodMillis;
    private final int periods;
    private final long bits;
    private final int k;
    private final int blockShift;

    /** Ring of filters; slot i holds period {@code periodOf[i]} or is null. */
    private final long[][] filters;
    private final long[] periodOf;
    private final long[] inserted;
    // a filter whose file does not hold its current bits (new, inserted into, or read from an older
    // version): flush writes only these, so a commit costs one filter's coding, not every day's
    private final boolean[] unsaved;
    private volatile long currentPeriod;
    private int currentSlot;

    /**
     * A chain of {@code periods} filters, each sized for {@code expectedPerPeriod} fingerprints at
     * {@code targetFpRate}; state in {@code dir} (null: memory only).
     */
    public BloomFilterChain(Path dir, Clock clock, long periodMillis, int periods, long expectedPerPeriod,
            double targetFpRate) {
        if (periods < 1 || periodMillis < 1 || expectedPerPeriod < 1 || !(targetFpRate > 0 && targetFpRate < 1)) {
            throw new IllegalArgumentException("bad Bloom filter chain settings");
        }
        this.dir = dir;
        this.clock = clock;
        this.periodMillis = periodMillis;
        this.periods = periods;
        double m = -expectedPerPeriod * Math.log(targetFpRate) / (Math.log(2) * Math.log(2));
        long b = 512;
        while (b < m && b < MAX_BITS) {
            b <<= 1;
        }
        this.bits = b;
        this.k = (int) Math.max(1, Math.min(14, Math.round((double) b / expectedPerPeriod * Math.log(2))));
        this.blockShift = 64 - Long.numberOfTrailingZeros(b / 512);
        this.filters = new long[periods][];
        this.periodOf = new long[periods];
        this.inserted = new long[periods];
        this.unsaved = new boolean[periods];
        java.util.Arrays.fill(periodOf, Long.MIN_VALUE);
        if (dir != null) {
            load();
        }
        long now = periodNow();
        currentPeriod = Long.MIN_VALUE;
        rotateTo(now);
    }

    private long periodNow() {
        return Math.floorDiv(clock.millis(), periodMillis);
    }

    /** Starts a new filter if the period changed, dropping the oldest; cheap when it did not. */
    public void advance() {
        long now = periodNow();
        if (now != currentPeriod) {
            synchronized (this) {
                rotateTo(now);
            }
        }
    }

    private void rotateTo(long now) {
        if (now == currentPeriod) {
            return;
        }
        // Drop filters that fell out of the window (the thesis' deletion: a whole filter at once).
        for (int i = 0; i < periods; i++) {
            if (filters[i] != null && (periodOf[i] <= now - periods || periodOf[i] > now)) {
                deleteFile(periodOf[i]);
                filters[i] = null;
                periodOf[i] = Long.MIN_VALUE;
                inserted[i] = 0;
            }
        }
        int slot = -1;
        for (int i = 0; i < periods; i++) {
            if (periodOf[i] == now) {
                slot = i;
            }
        }
        if (slot < 0) {
            for (int i = 0; i < periods && slot < 0; i++) {
                if (filters[i] == null) {
                    slot = i;
                }
            }
            if (slot < 0) {
                slot = oldestSlot();
                deleteFile(periodOf[slot]);
            }
            filters[slot] = new long[(int) Math.min(Integer.MAX_VALUE - 8, bits / 64)];
            periodOf[slot] = now;
            inserted[slot] = 0;
            unsaved[slot] = true;
        }
        currentSlot = slot;
        currentPeriod = now;
    }

    private int oldestSlot() {
        int s = 0;
        for (int i = 1; i < periods; i++) {
            if (periodOf[i] < periodOf[s]) {
                s = i;
            }
        }
        return s;
    }

    /** Adds fingerprints {@code from..to-1} of packed {@code fps} to the current period's filter. */
    public synchronized void addAll(byte[] fps, int from, int to) {
        long[] f = filters[currentSlot];
        for (int i = from; i < to; i++) {
            int b = i * 32;
            long w1 = (long) LONGS.get(fps, b + 8);
            long w2 = (long) LONGS.get(fps, b + 16);
            long w3 = (long) LONGS.get(fps, b + 24);
            int base = blockShift == 64 ? 0 : (int) (w1 >>> blockShift) << 3;
            for (int j = 0; j < k; j++) {
                int bit = bitOf(w2, w3, j);
                f[base + (bit >>> 6)] |= 1L << bit;
            }
        }
        inserted[currentSlot] += to - from;
        unsaved[currentSlot] = true;
    }

    private static int bitOf(long w2, long w3, int j) {
        return j < 7 ? (int) (w2 >>> (j * 9)) & 511 : (int) (w3 >>> ((j - 7) * 9)) & 511;
    }

    /** True if the fingerprint at index {@code i} of {@code fps} may be in any filter of the chain. */
    public boolean mightContain(byte[] fps, int i) {
        int b = i * 32;
        long w1 = (long) LONGS.get(fps, b + 8);
        long w2 = (long) LONGS.get(fps, b + 16);
        long w3 = (long) LONGS.get(fps, b + 24);
        int base = blockShift == 64 ? 0 : (int) (w1 >>> blockShift) << 3;
        for (long[] f : filters) {
            if (f == null) {
                continue;
            }
            boolean all = true;
            for (int j = 0; j < k && all; j++) {
                int bit = bitOf(w2, w3, j);
                all = (f[base + (bit >>> 6)] & (1L << bit)) != 0;
            }
            if (all) {
                return true;
            }
        }
        return false;
    }

    /** Share of set bits per live filter, newest first is not guaranteed; averaged over live filters. */
    public synchronized double fill() {
        double sum = 0;
        int n = 0;
        for (long[] f : filters) {
            if (f != null) {
                sum += fillOf(f);
                n++;
            }
        }
        return n == 0 ? 0 : sum / n;
    }

    private static double fillOf(long[] f) {
        long set = 0;
        for (long w : f) {
            set += Long.bitCount(w);
        }
        return (double) set / (f.length * 64.0);
    }

    /** Estimated false-positive rate of a probe of the whole chain, from the measured fill. */
    public synchronized double falsePositiveRate() {
        double none = 1;
        for (long[] f : filters) {
            if (f != null) {
                none *= 1 - Math.pow(fillOf(f), k);
            }
        }
        return 1 - none;
    }

    /** Filters in the chain now. */
    public synchronized int liveFilters() {
        int n = 0;
        for (long[] f : filters) {
            if (f != null) {
                n++;
            }
        }
        return n;
    }

    /** Bits per filter. */
    public long bitsPerFilter() {
        return bits;
    }

    /** Bit positions per fingerprint. */
    public int hashCount() {
        return k;
    }

    /** The current period number (clock millis / period length). */
    public long currentPeriod() {
        return currentPeriod;
    }

    /** Bytes held by the live filters. */
    public synchronized long memoryBytes() {
        long b = 0;
        for (long[] f : filters) {
            if (f != null) {
                b += f.length * 8L;
            }
        }
        return b;
    }

    private Path fileOf(long period) {
        return dir.resolve(String.format("%016x.bloom", period));
    }

    private void deleteFile(long period) {
        if (dir == null || period == Long.MIN_VALUE) {
            return;
        }
        try {
            Files.deleteIfExists(fileOf(period));
        } catch (IOException e) {
            throw StoreException.translate("bloom-filter-chain", fileOf(period).toString(), Long.toString(period), e);
        }
    }

    /** Writes every live filter that changed since it was last written or read (temp file, force, rename). */
    public synchronized void flush() {
        if (dir == null) {
            return;
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw StoreException.translate("bloom-filter-chain", dir.toString(), null, e);
        }
        for (int i = 0; i < periods; i++) {
            if (filters[i] != null && unsaved[i]) {
                write(i);
                unsaved[i] = false; // not before the rename: a failed write is tried again at the next flush
            }
        }
    }

    private void write(int slot) {
        long[] f = filters[slot];
        Path target = fileOf(periodOf[slot]);
        Path tmp = dir.resolve(target.getFileName() + ".tmp");
        // coded: a filter of the configured size is mostly zeros until its period has seen its
        // expected inserts, and the file should grow with what it holds, not with its sizing
        byte[] packed = BloomBitsCoder.encode(f);
        ByteBuffer file = ByteBuffer.allocate(HEADER_BYTES + packed.length + 4).order(ByteOrder.BIG_ENDIAN);
        file.putInt(MAGIC).putInt(VERSION).putLong(periodOf[slot]).putLong(bits).putInt(k).putLong(inserted[slot]);
        file.position(HEADER_BYTES);
        file.put(packed);
        CRC32C crc = new CRC32C();
        crc.update(file.array(), 0, file.position());
        file.putInt((int) crc.getValue()).flip();
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            writeFully(ch, file);
            ch.force(true);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw StoreException.translate("bloom-filter-chain", target.toString(), Long.toString(periodOf[slot]), e);
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    private void load() {
        try {
            Files.createDirectories(dir);
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                for (Path p : ds) {
                    String name = p.getFileName().toString();
                    if (name.endsWith(".tmp")) {
                        Files.deleteIfExists(p);
                    } else if (name.endsWith(".bloom")) {
                        loadFile(p);
                    }
                }
            }
        } catch (IOException e) {
            throw StoreException.translate("bloom-filter-chain", dir.toString(), null, e);
        }
    }

    private void loadFile(Path p) throws IOException {
        long size = Files.size(p);
        if (size < HEADER_BYTES + 4 || size > HEADER_BYTES + bits / 8 + (bits >> 10) + 1024) {
            return; // torn, or written with other sizing: skip it
        }
        byte[] data = Files.readAllBytes(p);
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length - 4);
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.BIG_ENDIAN);
        if (b.getInt(data.length - 4) != (int) crc.getValue() || b.getInt() != MAGIC) {
            return;
        }
        int version = b.getInt();
        long period = b.getLong();
        long fileBits = b.getLong();
        int fileK = b.getInt();
        long count = b.getLong();
        if (fileBits != bits || fileK != k) {
            return;
        }
        long[] f = new long[(int) (bits / 64)];
        int bodyBytes = data.length - 4 - HEADER_BYTES;
        boolean ok;
        if (version == VERSION_1 && bodyBytes == bits / 8) {
            ByteBuffer.wrap(data, HEADER_BYTES, bodyBytes).slice().asLongBuffer().get(f);
            ok = true;
        } else if (version == VERSION_2) {
            ok = BloomBitsCoder.decodeZstd(data, HEADER_BYTES, bodyBytes, f);
        } else if (version == VERSION) {
            ok = BloomBitsCoder.decode(data, HEADER_BYTES, bodyBytes, f);
        } else {
            ok = false;
        }
        if (!ok) {
            return;
        }
        int slot = -1;
        for (int i = 0; i < periods && slot < 0; i++) {
            if (filters[i] == null) {
                slot = i;
            }
        }
        if (slot < 0) {
            slot = oldestSlot();
            if (periodOf[slot] >= period) {
                return;
            }
        }
        filters[slot] = f;
        periodOf[slot] = period;
        inserted[slot] = count;
        unsaved[slot] = version != VERSION; // an older version's file is rewritten as the current one
    }

    @Override
    public void close() {
        flush();
    }
}
