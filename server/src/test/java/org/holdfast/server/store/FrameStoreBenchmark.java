package org.holdfast.server.store;

import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.stream.Stream;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.ZeroBlocks;

/**
 * Stores the non-zero 4 KiB blocks of a file twice, on real stores: as block records (zstd per
 * block, raw when zstd does not pay: format v1's layout) and as frame records of {@code frameKiB}
 * raw (format v2), then reads every block back in PBN order with {@code readBatch} twice: as the
 * agent restore does (stored bytes only, no decode) and as the image download does (decode and
 * SHA-256 of each block). Prints log bytes, append and read times (wall and process CPU). Not a
 * test; run by hand, see docs/benchmarks.md "Data log v2: frames".
 *
 * <p>Arguments: file [MiB to take, default 256] [frame KiB, default 64] [directory, default a temp dir].
 */
public final class FrameStoreBenchmark {
    private static final int BS = 4096;

    private FrameStoreBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        long mib = args.length > 1 ? Long.parseLong(args[1]) : 256;
        int frameBlocks = (args.length > 2 ? Integer.parseInt(args[2]) : 64) * 1024 / BS;
        Path dir = args.length > 3 ? Path.of(args[3]) : Files.createTempDirectory("frame-bench");
        byte[] data = new byte[(int) Math.min(mib << 20, Files.size(file)) / BS * BS];
        try (InputStream in = Files.newInputStream(file)) {
            in.readNBytes(data, 0, data.length);
        }
        int blocks = 0;
        byte[] packed = new byte[data.length];
        for (int at = 0; at < data.length; at += BS) {
            if (!ZeroBlocks.isZero(data, at, BS)) {
                System.arraycopy(data, at, packed, blocks++ * BS, BS);
            }
        }
        byte[] fps = new byte[blocks * 32];
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (int i = 0; i < blocks; i++) {
            sha.update(packed, i * BS, BS);
            sha.digest(fps, i * 32, 32);
        }
        System.out.printf(Locale.ROOT, "%s: %d MiB, %d non-zero 4 KiB blocks; frames of %d blocks%n", file, data.length >> 20, blocks,
                frameBlocks);
        run("block records", dir.resolve("v1"), packed, fps, blocks, 1, sha);
        run("frame records", dir.resolve("v2"), packed, fps, blocks, frameBlocks, sha);
    }

    private static void run(String name, Path dir, byte[] packed, byte[] fps, int blocks, int frameBlocks, MessageDigest sha)
            throws Exception {
        long[] pbns = new long[blocks];
        long t0 = System.nanoTime();
        long c0 = cpu();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 256L << 20, FsyncPolicy.COMMIT, 1 << 16, 0), db);
             BlockCodec codec = new BlockCodec()) {
            byte[] z = new byte[frameBlocks * BS + 8192];
            for (int i = 0; i < blocks; ) {
                int m = Math.min(frameBlocks, blocks - i);
                int n = m > 1 ? codec.compress(packed, i * BS, m * BS, z, 0) : -1;
                if (n > 0) {
                    long first = store.appendFrame(fps, i * 32, m, z, 0, n, BS);
                    for (int k = 0; k < m; k++) {
                        pbns[i + k] = first + k;
                    }
                    i += m;
                    continue;
                }
                int end = i + m;
                for (; i < end; i++) { // one block, or a frame zstd does not shrink: block records
                    int zl = codec.compress(packed, i * BS, BS, z, 0);
                    pbns[i] = zl > 0 ? store.append(fps, i * 32, z, 0, zl, FormatVersions.CODEC_ZSTD, BS)
                            : store.append(fps, i * 32, packed, i * BS, BS, FormatVersions.CODEC_RAW, BS);
                }
            }
            store.sync();
            double appendS = (System.nanoTime() - t0) / 1e9;
            double appendCpu = (cpu() - c0) / 1e9;
            long bytes;
            try (Stream<Path> s = Files.list(dir.resolve("data"))) {
                bytes = s.mapToLong(p -> p.toFile().length()).sum();
            }
            double gib = (double) blocks * BS / (1 << 30);
            System.out.printf(Locale.ROOT, "%s: logs %.1f MiB (%.3f of raw); append %.2f s wall, %.2f CPU-s/GiB%n", name,
                    bytes / 1048576.0, bytes / ((double) blocks * BS), appendS, appendCpu / gib);
            for (boolean decode : new boolean[] {false, true}) {
                BlockBatch batch = new BlockBatch(256, 4 << 20, FormatVersions.MAX_STORED_BYTES);
                byte[] out = new byte[BS];
                byte[] digest = new byte[32];
                long regions = store.regionsRead();
                long t1 = System.nanoTime();
                long c1 = cpu();
                long sent = 0;
                long lastLog = -1;
                long lastOffset = -1;
                for (int done = 0; done < blocks; ) {
                    int got = store.readBatch(pbns, done, blocks - done, batch);
                    for (int i = 0; i < got; i++) {
                        if (decode) {
                            batch.decode(i, codec, out, 0);
                            sha.update(out, 0, BS);
                            sha.digest(digest, 0, 32);
                        } else if (batch.frameLogId(i) != lastLog || batch.frameOffset(i) != lastOffset) {
                            sent += batch.storedLength(i); // a frame goes out once per message, as RestoreStream will send it
                            lastLog = batch.frameLogId(i);
                            lastOffset = batch.frameOffset(i);
                        }
                    }
                    done += got;
                }
                double s = (System.nanoTime() - t1) / 1e9;
                System.out.printf(Locale.ROOT, "%s: read %s %.2f s wall (%.0f MiB/s of blocks), %.2f CPU-s/GiB, %d regions%s%n", name,
                        decode ? "+ decode + SHA-256" : "as stored       ", s, blocks * (double) BS / 1048576 / s, (cpu() - c1) / 1e9 / gib,
                        store.regionsRead() - regions, decode ? "" : String.format(Locale.ROOT, ", %.1f MiB to send", sent / 1048576.0));
            }
        }
    }

    private static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
}
