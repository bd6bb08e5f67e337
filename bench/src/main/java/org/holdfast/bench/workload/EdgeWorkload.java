package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Corner cases that bound what any block-level dedup can do, two days each:
 * <ul>
 *   <li>{@code zero}: an all-zero volume (nothing should be stored or sent);</li>
 *   <li>{@code random}: incompressible random bytes (nothing to dedup or compress), of which
 *       1.5 % of the blocks are rewritten on day 1;</li>
 *   <li>{@code shifted}: compressible content into which {@link #SHIFT_BYTES} bytes are inserted
 *       near the start on day 1, so every later block boundary moves. Fixed-size blocks find
 *       almost no duplicates after that; content-defined chunkers (restic, borg) find nearly
 *       all. It shows the price of fixed blocks, which block volumes rarely pay.</li>
 * </ul>
 */
public final class EdgeWorkload implements Workload {
    /** Bytes inserted on day 1 of the shifted volume. */
    public static final int SHIFT_BYTES = 1000;
    private static final long SHIFT_AT = 4096 + 123;
    private static final List<String> VOLUMES = List.of("zero", "random", "shifted");

    private final Path dir;
    private final long seed;
    private final long volumeBytes;

    /** Quick: 16 MiB per volume; full: 256 MiB per volume. */
    public EdgeWorkload(Path dir, WorkloadScale scale, long seed) {
        this(dir, seed, scale == WorkloadScale.QUICK ? 16L << 20 : 256L << 20);
    }

    /** Explicit volume size, a multiple of 4 KiB. */
    public EdgeWorkload(Path dir, long seed, long volumeBytes) {
        this.dir = dir;
        this.seed = seed;
        this.volumeBytes = volumeBytes;
    }

    @Override
    public String name() {
        return "edge";
    }

    @Override
    public int days() {
        return 2;
    }

    @Override
    public List<String> volumes() {
        return VOLUMES;
    }

    @Override
    public Path image(String volume) {
        return dir.resolve(volume + ".img");
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("volumes", VOLUMES);
        d.put("volumeBytes", volumeBytes);
        d.put("days", 2);
        d.put("shiftBytes", SHIFT_BYTES);
        d.put("shiftAt", SHIFT_AT);
        d.put("seed", seed);
        return d;
    }

    @Override
    public void advance(int day) throws IOException {
        if (day == 0) {
            VolumeImage.create(image("zero"), volumeBytes).close();
            try (VolumeImage img = VolumeImage.create(image("random"), volumeBytes)) {
                for (long b = 0; b < img.blocks(); b++) {
                    img.writeBlock(b, BlockContent.Kind.RANDOM, BlockContent.key(seed, 10, b), BlockContent.BLOCK);
                }
            }
            try (VolumeImage img = VolumeImage.create(image("shifted"), volumeBytes)) {
                for (long b = 0; b < img.blocks(); b++) {
                    // 64 KiB stretches alternate between text and binary, like a mixed file set.
                    BlockContent.Kind kind = ((b >> 4) & 1) == 0 ? BlockContent.Kind.TEXT : BlockContent.Kind.BINARY;
                    img.writeBlock(b, kind, BlockContent.key(seed, 11, b), BlockContent.BLOCK);
                }
            }
            return;
        }
        if (day == 1) {
            try (VolumeImage img = VolumeImage.open(image("random"))) {
                SplittableRandom r = new SplittableRandom(BlockContent.key(seed, 12, 1));
                long n = Math.max(1, img.blocks() * 15 / 1000);
                for (long i = 0; i < n; i++) {
                    long b = r.nextLong(img.blocks());
                    img.writeBlock(b, BlockContent.Kind.RANDOM, BlockContent.key(seed, 13, b), BlockContent.BLOCK);
                }
            }
            try (VolumeImage img = VolumeImage.open(image("shifted"))) {
                insert(img, SHIFT_AT, SHIFT_BYTES);
            }
            return;
        }
        throw new IllegalArgumentException("edge workload has days 0 and 1 only, not " + day);
    }

    /** Moves everything from {@code at} up by {@code n} bytes (dropping the overflow) and fills the gap. */
    private void insert(VolumeImage img, long at, int n) throws IOException {
        long size = img.blocks() * BlockContent.BLOCK;
        byte[] buf = new byte[1 << 20];
        long end = size - n;
        while (end > at) {
            int len = (int) Math.min(buf.length, end - at);
            long from = end - len;
            img.readBytes(from, buf, 0, len);
            img.writeBytes(from + n, buf, 0, len);
            end = from;
        }
        byte[] gap = new byte[n];
        BlockContent.fill(BlockContent.Kind.TEXT, BlockContent.key(seed, 14, 0), gap, 0, n);
        img.writeBytes(at, gap, 0, n);
    }
}
