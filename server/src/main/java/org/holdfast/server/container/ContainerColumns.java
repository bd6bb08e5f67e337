package org.holdfast.server.container;

/**
 * The columns of a version 2 container file beside its fingerprints (PBNs, segments, SI) as runs of
 * unsigned LEB128 varints, before {@link ContainerFile} compresses them into one zstd frame.
 *
 * <p>Why runs: PBNs are allocated densely, so a stored segment's PBNs are consecutive, and an
 * offset's SI slots repeat the previous offset's along a segment. Raw, these two columns are 16 of
 * a K=2 container's 48 bytes per fingerprint; as runs they take a few bytes per segment. Runs
 * rather than a delta per entry also keep the load cheap: a run is filled by a plain loop, where a
 * delta per entry costs a varint parse per entry (decoding the columns of a full container of
 * 16,384 fingerprints took 130 to 190 microseconds that way, about 50 as runs, arrays included).
 *
 * <ul>
 *   <li>PBN runs until n entries are covered: length L &gt;= 1, then 0 for L purged entries, or
 *       1 + zig-zag(first - (last PBN of the previous non-purged run + 1)) for L consecutive PBNs
 *       from first (the previous run's last PBN starts as 0).
 *   <li>Segment, s records: flags (bit 1 free slot: nothing follows); else start, end - start,
 *       exact matches, zig-zag(LRU stamp - previous live segment's stamp).
 *   <li>SI, slot by slot (0..K-1), runs until n offsets are covered: length L &gt;= 1, then
 *       zig-zag(id - previous run's id) for L offsets holding segment id in that slot (-1 empty; the
 *       previous id starts as -1).
 * </ul>
 *
 * Decoding checks every read against the end of the bytes and every value against the container's
 * limits; a read past the end or an over-long varint makes the whole decode fail.
 */
final class ContainerColumns {
    /** Longest varint of a 64-bit value. */
    private static final int MAX_LONG_VARINT = 10;
    /** Longest varint of a 32-bit value. */
    private static final int MAX_INT_VARINT = 5;

    private final byte[] data;
    private int pos;
    private final int end;
    private boolean bad;

    private ContainerColumns(byte[] data, int end) {
        this.data = data;
        this.end = end;
    }

    /** Upper bound of the encoded bytes of a container with these counts (what a reader allows). */
    static long maxBytes(int n, int s, int k) {
        return (long) n * (MAX_INT_VARINT + MAX_LONG_VARINT) + (long) s * (4L * MAX_INT_VARINT + MAX_LONG_VARINT)
                + (long) n * k * 2 * MAX_INT_VARINT;
    }

    /** Encodes {@code c}'s columns into {@code out} (at least {@link #maxBytes} long); returns the bytes written. */
    static int encode(Container c, byte[] out) {
        ContainerColumns w = new ContainerColumns(out, out.length);
        int n = c.count();
        long last = 0;
        for (int off = 0, to; off < n; off = to) {
            long first = c.pbn(off);
            to = off + 1;
            if (first == 0) {
                while (to < n && c.pbn(to) == 0) {
                    to++;
                }
                w.putInt(to - off);
                w.putLong(0);
            } else {
                while (to < n && c.pbn(to) == c.pbn(to - 1) + 1) {
                    to++;
                }
                w.putInt(to - off);
                w.putLong(1 + zigZag(first - (last + 1)));
                last = c.pbn(to - 1);
            }
        }
        long prevUse = 0;
        for (int s = 0; s < c.segmentCapacity(); s++) {
            if (!c.isLiveSegment(s)) {
                w.putInt(Container.FLAG_DEAD);
                continue;
            }
            w.putInt(c.segmentFlags(s));
            w.putInt(c.segmentStart(s));
            w.putInt(c.segmentEnd(s) - c.segmentStart(s));
            w.putInt(c.exactMatches(s));
            w.putLong(zigZag(c.lastUse(s) - prevUse));
            prevUse = c.lastUse(s);
        }
        int k = c.k();
        for (int j = 0; j < k; j++) {
            int prev = -1;
            for (int off = 0, to; off < n; off = to) {
                int id = c.siAt(off * k + j);
                to = off + 1;
                while (to < n && c.siAt(to * k + j) == id) {
                    to++;
                }
                w.putInt(to - off);
                w.putInt(zigZag(id - prev));
                prev = id;
            }
        }
        return w.pos;
    }

    /**
     * Decodes {@code len} bytes into the arrays (sized n, s, s, s, s, s, n*K, all zero); false unless
     * they hold exactly these counts and every value is within the container's limits.
     */
    static boolean decode(byte[] data, int len, int n, int k, long[] p, int[] starts, int[] ends, int[] exact,
            int[] flags, long[] use, int[] si) {
        ContainerColumns r = new ContainerColumns(data, len);
        long last = 0;
        for (int off = 0; off < n;) {
            int run = r.getInt();
            long v = r.getLong();
            if (r.bad || run <= 0 || run > n - off) {
                return false;
            }
            if (v != 0) {
                long first = last + 1 + unZigZag(v - 1);
                if (first <= 0 || first > Long.MAX_VALUE - (run - 1)) {
                    return false;
                }
                for (int i = 0; i < run; i++) {
                    p[off + i] = first + i;
                }
                last = first + run - 1;
            }
            off += run;
        }
        int s = starts.length;
        long prevUse = 0;
        for (int i = 0; i < s; i++) {
            flags[i] = r.getInt();
            if ((flags[i] & Container.FLAG_DEAD) != 0) {
                continue;
            }
            long start = r.getInt() & 0xFFFFFFFFL;
            long end = start + (r.getInt() & 0xFFFFFFFFL);
            if (end <= start || end > n) {
                return false;
            }
            starts[i] = (int) start;
            ends[i] = (int) end;
            exact[i] = r.getInt();
            prevUse += unZigZag(r.getLong());
            use[i] = prevUse;
        }
        for (int j = 0; j < k; j++) {
            int id = -1;
            for (int off = 0; off < n;) {
                int run = r.getInt();
                id += unZigZag(r.getInt());
                if (r.bad || run <= 0 || run > n - off || id < -1 || id >= s) {
                    return false;
                }
                for (int to = off + run; off < to; off++) {
                    si[off * k + j] = id;
                }
            }
        }
        return !r.bad && r.pos == len;
    }

    private static int zigZag(int v) {
        return v << 1 ^ v >> 31;
    }

    private static int unZigZag(int v) {
        return v >>> 1 ^ -(v & 1);
    }

    private static long zigZag(long v) {
        return v << 1 ^ v >> 63;
    }

    private static long unZigZag(long v) {
        return v >>> 1 ^ -(v & 1);
    }

    private void putLong(long v) {
        while ((v & ~0x7FL) != 0) {
            data[pos++] = (byte) (v & 0x7F | 0x80);
            v >>>= 7;
        }
        data[pos++] = (byte) v;
    }

    private void putInt(int v) {
        putLong(v & 0xFFFFFFFFL);
    }

    private long getLong() {
        // Most values (short runs, small deltas) take one byte: decode those inline.
        if (pos < end && data[pos] >= 0) {
            return data[pos++];
        }
        return getLongSlow();
    }

    private long getLongSlow() {
        long v = 0;
        for (int i = 0; i < MAX_LONG_VARINT; i++) {
            if (pos >= end) {
                bad = true;
                return 0;
            }
            byte b = data[pos++];
            v |= (long) (b & 0x7F) << (7 * i);
            if (b >= 0) {
                // the tenth byte may only carry the top bit of 64
                bad |= i == MAX_LONG_VARINT - 1 && b > 1;
                return v;
            }
        }
        bad = true;
        return 0;
    }

    private int getInt() {
        long v = getLong();
        if (v >>> 32 != 0) {
            bad = true;
        }
        return (int) v;
    }
}
