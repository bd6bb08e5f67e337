package org.holdfast.client;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/** Test volumes: image files with seeded content, every {@code zeroEvery}-th block all zeros. */
public final class Images {
    private Images() {
    }

    public static Path create(Path file, long bytes, int blockSize, long seed, int zeroEvery) throws IOException {
        Random r = new Random(seed);
        byte[] block = new byte[blockSize];
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(0);
            for (long pos = 0, lbn = 0; pos < bytes; pos += blockSize, lbn++) {
                int n = (int) Math.min(blockSize, bytes - pos);
                if (zeroEvery > 0 && lbn % zeroEvery == 0) {
                    java.util.Arrays.fill(block, (byte) 0);
                } else {
                    r.nextBytes(block);
                    // half of each block compressible, so zstd and raw both occur
                    java.util.Arrays.fill(block, 0, blockSize / 2 * (int) (lbn % 2), (byte) 'a');
                }
                f.write(block, 0, n);
            }
        }
        return file;
    }

    /**
     * A sparse image of {@code bytes} bytes: 64 KiB of seeded random data at each offset of
     * {@code at}, holes (never written) everywhere else.
     */
    public static Path sparse(Path file, long bytes, long seed, long... at) throws IOException {
        byte[] data = new byte[64 << 10];
        Random r = new Random(seed);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(0);
            f.setLength(bytes);
            for (long pos : at) {
                r.nextBytes(data);
                f.seek(pos);
                f.write(data);
            }
            f.getFD().sync();
        }
        return file;
    }

    /** Overwrites block {@code lbn} with bytes derived from {@code seed}. */
    public static void overwrite(Path file, long lbn, int blockSize, long seed) throws IOException {
        byte[] block = new byte[blockSize];
        new Random(seed).nextBytes(block);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(lbn * blockSize);
            f.write(block);
        }
    }

    public static boolean sameContent(Path a, Path b) throws IOException {
        return Files.mismatch(a, b) == -1;
    }
}
