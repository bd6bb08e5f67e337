package org.holdfast.common.compress;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;

/**
 * A measuring tool, not a test (benchmarks.md, "zstd parameters for frames"): compression and
 * decompression CPU and stored bytes of an image's unique non-zero 4 KiB blocks, grouped into frames
 * of consecutive blocks as the agent groups them, for zstd level 1 against explicit parameter sets.
 *
 * <p>Usage: {@code java -cp ... ZstdParameterSweep IMAGE FRAME_BYTES REPEATS CONFIG...}; a CONFIG is
 * comma-separated {@code L<level>}, {@code h<hashLog>}, {@code c<chainLog>}, {@code s<searchLog>},
 * {@code m<minMatch>}, {@code t<targetLength>}, {@code st<strategy>}, {@code w<windowLog>}, e.g.
 * {@code L1,m7,h13}. CPU is the measuring thread's, the least of REPEATS passes.
 */
public final class ZstdParameterSweep {
    private static final int BLOCK = 4096;

    private ZstdParameterSweep() {
    }

    public static void main(String[] args) throws IOException, NoSuchAlgorithmException {
        int frameBytes = Integer.parseInt(args[1]);
        int repeats = Integer.parseInt(args[2]);
        List<byte[]> frames = frames(args[0], frameBytes);
        long raw = frames.stream().mapToLong(f -> f.length).sum();
        System.out.printf("%s, frames of up to %d KiB: %d unique non-zero blocks (%.1f MiB), %d frames%n", args[0],
                frameBytes / 1024, raw / BLOCK, raw / 1048576.0, frames.size());
        System.out.println("| parameters | stored MiB | bytes vs first | compress CPU-s/GiB | vs first | decode CPU-s/GiB | vs first | frames sent raw |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        double gib = raw / (double) (1L << 30);
        double[] first = null;
        for (String config : Arrays.asList(args).subList(3, args.length)) {
            double[] r = measure(frames, config, repeats, frameBytes);
            if (first == null) {
                first = r;
            }
            System.out.printf("| %s | %.1f | %+.1f %% | %.2f | %+.1f %% | %.2f | %+.1f %% | %d |%n", config, r[0] / 1048576.0,
                    pct(r[0], first[0]), r[1] / gib, pct(r[1], first[1]), r[2] / gib, pct(r[2], first[2]), (long) r[3]);
        }
    }

    private static double pct(double v, double base) {
        return 100 * (v / base - 1);
    }

    /** Unique non-zero blocks in LBN order; a frame is a run of consecutive such blocks, cut at {@code frameBytes}. */
    static List<byte[]> frames(String image, int frameBytes) throws IOException, NoSuchAlgorithmException {
        List<byte[]> frames = new ArrayList<>();
        HashSet<ByteBuffer> seen = new HashSet<>();
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] b = new byte[BLOCK];
        ByteArrayOutputStream frame = new ByteArrayOutputStream(frameBytes);
        try (InputStream in = new BufferedInputStream(new FileInputStream(image), 1 << 20)) {
            while (in.readNBytes(b, 0, BLOCK) == BLOCK) {
                boolean fresh = !allZero(b) && seen.add(ByteBuffer.wrap(sha.digest(b)));
                if (fresh) {
                    frame.write(b);
                }
                if (frame.size() > 0 && (!fresh || frame.size() >= frameBytes)) {
                    frames.add(frame.toByteArray());
                    frame.reset();
                }
            }
        }
        if (frame.size() > 0) {
            frames.add(frame.toByteArray());
        }
        return frames;
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /** {stored bytes, compress CPU-s, decode CPU-s, frames sent raw}; a frame is sent raw unless zstd saves 1/32, as BlockCodec does. */
    private static double[] measure(List<byte[]> frames, String config, int repeats, int frameBytes) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        byte[] out = new byte[(int) Zstd.compressBound(frameBytes)];
        byte[] back = new byte[frameBytes];
        byte[][] packed = new byte[frames.size()][];
        long stored = 0;
        long rawFrames = 0;
        long compress = Long.MAX_VALUE;
        long decode = Long.MAX_VALUE;
        for (int r = 0; r < repeats; r++) {
            stored = 0;
            rawFrames = 0;
            try (ZstdCompressCtx c = context(config)) {
                long t0 = threads.getCurrentThreadCpuTime();
                for (int f = 0; f < frames.size(); f++) {
                    byte[] src = frames.get(f);
                    int n = c.compressByteArray(out, 0, out.length, src, 0, src.length);
                    boolean pays = n < src.length - src.length / 32;
                    packed[f] = pays ? Arrays.copyOf(out, n) : null;
                    stored += pays ? n : src.length;
                    rawFrames += pays ? 0 : 1;
                }
                compress = Math.min(compress, threads.getCurrentThreadCpuTime() - t0);
            }
            try (ZstdDecompressCtx d = new ZstdDecompressCtx()) {
                long t0 = threads.getCurrentThreadCpuTime();
                for (int f = 0; f < frames.size(); f++) {
                    if (packed[f] != null) {
                        d.decompressByteArray(back, 0, frames.get(f).length, packed[f], 0, packed[f].length);
                    }
                }
                decode = Math.min(decode, threads.getCurrentThreadCpuTime() - t0);
            }
        }
        for (int f = 0; f < frames.size(); f++) {
            if (packed[f] != null && !Arrays.equals(Zstd.decompress(packed[f], frames.get(f).length), frames.get(f))) {
                throw new IllegalStateException(config + ": frame " + f + " does not decode to its blocks");
            }
        }
        return new double[] {stored, compress / 1e9, decode / 1e9, rawFrames};
    }

    private static ZstdCompressCtx context(String config) {
        ZstdCompressCtx c = new ZstdCompressCtx().setChecksum(false).setContentSize(true);
        for (String p : config.split(",")) {
            int v = Integer.parseInt(p.replaceAll("^[a-z]+|^L", ""));
            switch (p.replaceAll("-?\\d+$", "")) {
                case "L" -> c.setLevel(v);
                case "h" -> c.setHashLog(v);
                case "c" -> c.setChainLog(v);
                case "s" -> c.setSearchLog(v);
                case "m" -> c.setMinMatch(v);
                case "t" -> c.setTargetLength(v);
                case "st" -> c.setStrategy(v);
                case "w" -> c.setWindowLog(v);
                default -> throw new IllegalArgumentException("unknown parameter " + p + " (give e.g. L1,m7,h13)");
            }
        }
        return c;
    }
}
