package org.holdfast.server.engine;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Codes the bits of a Bloom filter for its file (format version 3): the gaps between set bits
 * Golomb-Rice-coded, or the bitset as one zstd frame when that is not larger.
 *
 * <p>Coding 1 (Rice): u8 1, u8 r, u64 number of set bits n, then n codes, most significant bit
 * first: for each set bit in increasing order its gap g (the zero bits since the previous set bit)
 * as {@code g >>> r} zero bits, a one bit, and the low r bits of g; zero bits up to the next byte.
 * Coding 0 (zstd): u8 0, then the bitset (big-endian longs) as one zstd frame, as in version 2.
 *
 * <p>Decoding checks every field against the filter's size before using it and answers false for
 * anything that does not decode to exactly the declared bits; it never allocates by a field it read.
 */
final class BloomBitsCoder {
    static final int CODING_ZSTD = 0;
    static final int CODING_RICE = 1;
    /** Largest Rice parameter written or accepted; gaps are under 2^36 (the largest filter). */
    static final int MAX_RICE = 40;
    private static final int RICE_HEAD = 10;

    private BloomBitsCoder() {
    }

    /** The coding byte and payload for {@code words}: Rice unless the zstd frame is not larger. */
    static byte[] encode(long[] words) {
        long set = 0;
        for (long w : words) {
            set += Long.bitCount(w);
        }
        long bits = words.length * 64L;
        int r0 = riceParameter(bits, set);
        // exact size for the estimate and its neighbours: (1 + r) bits per set bit plus the quotients
        int lo = Math.max(0, Math.min(r0 - 1, MAX_RICE - 2));
        long q0 = 0;
        long q1 = 0;
        long q2 = 0;
        SetBits it = new SetBits(words);
        for (long gap = it.nextGap(); gap >= 0; gap = it.nextGap()) {
            q0 += gap >>> lo;
            q1 += gap >>> (lo + 1);
            q2 += gap >>> (lo + 2);
        }
        long best = q0 + set * (1 + lo);
        int r = lo;
        if (q1 + set * (2 + lo) < best) {
            best = q1 + set * (2 + lo);
            r = lo + 1;
        }
        if (q2 + set * (3 + lo) < best) {
            best = q2 + set * (3 + lo);
            r = lo + 2;
        }
        long riceBytes = RICE_HEAD + (best + 7) / 8;
        // The gap codes stay near the entropy of a sparse random bitset, zstd's byte codes do not:
        // on blocked filters zstd was larger up to a fill of 15 % (Rice at 0.6 of the raw bits) and
        // smaller from 20 %. Under 3/8 of the raw bits (a fill under about 7 %) zstd is not tried.
        if (riceBytes * 8 > bits / 8 * 3 || riceBytes > Integer.MAX_VALUE - 16) {
            byte[] z = zstd(words);
            if (riceBytes > Integer.MAX_VALUE - 16 || z.length + 1 <= riceBytes) {
                byte[] out = new byte[z.length + 1];
                out[0] = CODING_ZSTD;
                System.arraycopy(z, 0, out, 1, z.length);
                return out;
            }
        }
        return rice(words, r, set, (int) riceBytes);
    }

    /** r ≈ log2(mean gap · ln 2), the Rice parameter near the best Golomb code for that fill. */
    private static int riceParameter(long bits, long set) {
        if (set == 0) {
            return 0;
        }
        double m = (double) bits / set * Math.log(2);
        return m < 2 ? 0 : Math.min(MAX_RICE, (int) Math.round(Math.log(m) / Math.log(2)));
    }

    private static byte[] zstd(long[] words) {
        ByteBuffer raw = ByteBuffer.allocate(words.length * 8).order(ByteOrder.BIG_ENDIAN);
        raw.asLongBuffer().put(words);
        return Zstd.compress(raw.array(), 1);
    }

    private static byte[] rice(long[] words, int r, long set, int size) {
        byte[] out = new byte[size];
        out[0] = CODING_RICE;
        out[1] = (byte) r;
        ByteBuffer.wrap(out).order(ByteOrder.BIG_ENDIAN).putLong(2, set);
        BitWriter bw = new BitWriter(out, RICE_HEAD);
        long lowMask = (1L << r) - 1;
        SetBits it = new SetBits(words);
        for (long gap = it.nextGap(); gap >= 0; gap = it.nextGap()) {
            bw.zeros(gap >>> r);
            bw.bits(1, 1);
            bw.bits(gap & lowMask, r);
        }
        bw.finish();
        return out;
    }

    /**
     * Decodes {@code len} bytes at {@code off} of {@code src} (coding byte first) into
     * {@code into}, which must be all zeros; false if they are not a valid coding of exactly
     * {@code into.length * 64} bits ({@code into} then holds garbage).
     */
    static boolean decode(byte[] src, int off, int len, long[] into) {
        if (len < 1) {
            return false;
        }
        return switch (src[off]) {
            case CODING_ZSTD -> decodeZstd(src, off + 1, len - 1, into);
            case CODING_RICE -> decodeRice(src, off, len, into);
            default -> false;
        };
    }

    /** A zstd frame of the big-endian bitset (version 2's body, version 3's coding 0) into {@code into}. */
    static boolean decodeZstd(byte[] src, int off, int len, long[] into) {
        int rawBytes = into.length * 8;
        byte[] raw = new byte[rawBytes];
        try {
            long n = Zstd.decompressByteArray(raw, 0, rawBytes, src, off, len);
            if (Zstd.isError(n) || n != rawBytes) {
                return false;
            }
        } catch (ZstdException e) {
            return false;
        }
        ByteBuffer.wrap(raw).order(ByteOrder.BIG_ENDIAN).asLongBuffer().get(into);
        return true;
    }

    private static boolean decodeRice(byte[] src, int off, int len, long[] into) {
        if (len < RICE_HEAD) {
            return false;
        }
        int r = src[off + 1] & 0xff;
        long set = ByteBuffer.wrap(src).order(ByteOrder.BIG_ENDIAN).getLong(off + 2);
        long bits = into.length * 64L;
        long payloadBits = (len - RICE_HEAD) * 8L;
        // every code takes at least 1 + r bits: a count that lies about that is refused before the loop
        if (r > MAX_RICE || set < 0 || set > bits || set * (1 + r) > payloadBits) {
            return false;
        }
        BitReader br = new BitReader(src, off + RICE_HEAD, off + len);
        long maxQ = bits >>> r;
        long prev = -1;
        for (long n = 0; n < set; n++) {
            long q = br.unary(maxQ);
            if (q < 0) {
                return false;
            }
            long low = br.bits(r);
            if (low < 0) {
                return false;
            }
            long pos = prev + 1 + ((q << r) | low);
            if (pos >= bits) {
                return false;
            }
            into[(int) (pos >>> 6)] |= 1L << pos;
            prev = pos;
        }
        return br.onlyPaddingLeft();
    }

    /** The set bits in increasing order, as gaps: no per-bit loop over the zero words' bits. */
    private static final class SetBits {
        private final long[] words;
        private int i = -1;
        private long w;
        private long prev = -1;

        SetBits(long[] words) {
            this.words = words;
        }

        /** Zero bits between the previous set bit (or the start) and the next one; -1 at the end. */
        long nextGap() {
            while (w == 0) {
                if (++i >= words.length) {
                    return -1;
                }
                w = words[i];
            }
            long pos = ((long) i << 6) + Long.numberOfTrailingZeros(w);
            w &= w - 1;
            long gap = pos - prev - 1;
            prev = pos;
            return gap;
        }
    }

    /** Writes bits most significant first into a buffer sized exactly by the caller. */
    private static final class BitWriter {
        private final byte[] out;
        private int at;
        private long acc;
        private int n;

        BitWriter(byte[] out, int at) {
            this.out = out;
            this.at = at;
        }

        void zeros(long count) {
            while (count > 0) {
                int c = (int) Math.min(count, 32);
                bits(0, c);
                count -= c;
            }
        }

        /** The low {@code c} (at most 56) bits of {@code v}. */
        void bits(long v, int c) {
            if (c == 0) {
                return;
            }
            if (n + c > 64) {
                drain();
            }
            acc |= v << (64 - n - c);
            n += c;
        }

        private void drain() {
            while (n >= 8) {
                out[at++] = (byte) (acc >>> 56);
                acc <<= 8;
                n -= 8;
            }
        }

        void finish() {
            drain();
            if (n > 0) {
                out[at++] = (byte) (acc >>> 56);
            }
        }
    }

    /** Reads bits most significant first; answers -1 where the input ends early or a code is too long. */
    private static final class BitReader {
        private final byte[] src;
        private final int end;
        private int next;
        private long window;
        private int have;

        BitReader(byte[] src, int from, int end) {
            this.src = src;
            this.next = from;
            this.end = end;
        }

        private void refill() {
            while (have <= 56 && next < end) {
                window |= (src[next++] & 0xffL) << (56 - have);
                have += 8;
            }
        }

        /** Zero bits up to the next one bit (consumed), at most {@code max}; -1 if longer or cut off. */
        long unary(long max) {
            long q = 0;
            while (true) {
                refill();
                if (have == 0) {
                    return -1;
                }
                if (window == 0) {
                    q += have;
                    have = 0;
                } else {
                    int z = Long.numberOfLeadingZeros(window);
                    q += z;
                    window = z == 63 ? 0 : window << (z + 1);
                    have -= z + 1;
                    return q > max ? -1 : q;
                }
                if (q > max) {
                    return -1;
                }
            }
        }

        /** The next {@code c} (at most 56) bits; -1 if cut off. */
        long bits(int c) {
            if (c == 0) {
                return 0;
            }
            refill();
            if (have < c) {
                return -1;
            }
            long v = window >>> (64 - c);
            window <<= c;
            have -= c;
            return v;
        }

        /** True if what is left is under a byte of zero bits. */
        boolean onlyPaddingLeft() {
            return next == end && have < 8 && window == 0;
        }
    }
}
