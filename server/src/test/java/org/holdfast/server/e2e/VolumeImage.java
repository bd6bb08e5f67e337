package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Random;
import java.util.Set;

/**
 * A volume image in memory that tests change the way a disk changes (overwrites, appends, zeroed
 * regions, moved regions, shrinks), from a seeded {@link Random} so every run is the same.
 *
 * <p>Content comes in three kinds: random bytes (incompressible, unique per block), compressible
 * bytes (short runs over a small alphabet: unique per block, but zstd shrinks them a few times),
 * and zeros (never stored).
 */
public final class VolumeImage {
    /** What to fill a region with. */
    public enum Content { RANDOM, COMPRESSIBLE, ZERO }

    private static final byte[] ALPHABET = "etaoin shrdlu\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final Random random;
    private byte[] bytes;
    private int length;

    private VolumeImage(Random random, byte[] bytes, int length) {
        this.random = random;
        this.bytes = bytes;
        this.length = length;
    }

    /**
     * A new image of {@code size} bytes: regions of 64 KiB to 1 MiB, about half random, a third
     * compressible and the rest zeros.
     */
    public static VolumeImage generate(long seed, int size) {
        VolumeImage img = new VolumeImage(new Random(seed), new byte[size], size);
        int off = 0;
        while (off < size) {
            int len = Math.min(size - off, (64 << 10) * (1 + img.random.nextInt(16)));
            int pick = img.random.nextInt(6);
            img.fill(off, len, pick < 3 ? Content.RANDOM : pick < 5 ? Content.COMPRESSIBLE : Content.ZERO);
            off += len;
        }
        return img;
    }

    /** An independent copy that continues with its own seeded random source. */
    public VolumeImage copy(long seed) {
        return new VolumeImage(new Random(seed), Arrays.copyOf(bytes, bytes.length), length);
    }

    public int length() {
        return length;
    }

    /** Overwrites {@code [off, off + len)} in place with the given content. */
    public VolumeImage fill(int off, int len, Content content) {
        check(off, len);
        switch (content) {
            case ZERO -> Arrays.fill(bytes, off, off + len, (byte) 0);
            case RANDOM -> {
                byte[] r = new byte[len];
                random.nextBytes(r);
                System.arraycopy(r, 0, bytes, off, len);
            }
            case COMPRESSIBLE -> {
                int i = off;
                while (i < off + len) {
                    byte b = ALPHABET[random.nextInt(ALPHABET.length)];
                    int run = 1 + random.nextInt(12);
                    for (int k = 0; k < run && i < off + len; k++) {
                        bytes[i++] = b;
                    }
                }
            }
        }
        return this;
    }

    /** Grows the image by {@code len} bytes of the given content. */
    public VolumeImage append(int len, Content content) {
        if (length + len > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(length + len, bytes.length * 3 / 2));
        }
        int off = length;
        length += len;
        return fill(off, len, content);
    }

    /** Cuts the image to {@code newLength} bytes. */
    public VolumeImage truncate(int newLength) {
        if (newLength < 0 || newLength > length) {
            throw new IllegalArgumentException("cannot truncate " + length + " to " + newLength);
        }
        Arrays.fill(bytes, newLength, length, (byte) 0);
        length = newLength;
        return this;
    }

    /** Copies {@code [from, from + len)} to {@code to} (overlap allowed), as a moved file would. */
    public VolumeImage move(int from, int to, int len) {
        check(from, len);
        check(to, len);
        System.arraycopy(bytes, from, bytes, to, len);
        return this;
    }

    /** Copies {@code [from, from + len)} of another image to {@code to} of this one (old content coming back). */
    public VolumeImage copyFrom(VolumeImage other, int from, int to, int len) {
        other.check(from, len);
        check(to, len);
        System.arraycopy(other.bytes, from, bytes, to, len);
        return this;
    }

    /** Flips one byte at each of {@code count} random offsets. */
    public VolumeImage scribble(int count) {
        for (int i = 0; i < count; i++) {
            int off = random.nextInt(length);
            bytes[off] = (byte) (bytes[off] ^ (1 + random.nextInt(255)));
        }
        return this;
    }

    /** A random offset in {@code [0, length - len]} that is a multiple of {@code align}. */
    public int randomOffset(int len, int align) {
        int slots = (length - len) / align;
        return random.nextInt(slots + 1) * align;
    }

    /** Writes the image to {@code file}, replacing it. */
    public Path writeTo(Path file) {
        try {
            Files.write(file, length == bytes.length ? bytes : Arrays.copyOf(bytes, length));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Hex SHA-256 of the image. */
    public String sha256() {
        MessageDigest md = sha();
        md.update(bytes, 0, length);
        return HexFormat.of().formatHex(md.digest());
    }

    /** The distinct SHA-256 fingerprints of the image's non-zero blocks (the last block zero-padded). */
    public Set<String> blockFingerprints(int blockSize) {
        Set<String> set = new HashSet<>();
        byte[] block = new byte[blockSize];
        MessageDigest md = sha();
        for (int off = 0; off < length; off += blockSize) {
            int n = Math.min(blockSize, length - off);
            Arrays.fill(block, (byte) 0);
            System.arraycopy(bytes, off, block, 0, n);
            if (isZero(block)) {
                continue;
            }
            set.add(HexFormat.of().formatHex(md.digest(block)));
        }
        return set;
    }

    /**
     * The range an agent's changed-block count must fall in when going from {@code before} (null:
     * no previous snapshot) to this image: at least the blocks whose zero-padded content differs
     * plus the new non-zero blocks past the old end; at most that plus the new zero blocks past
     * the old end and the blocks cut off by a shrink (whether those count is the agent's choice).
     */
    public long[] changedBlockRange(VolumeImage before, int blockSize) {
        long min = 0;
        long max = 0;
        long oldBlocks = before == null ? 0 : before.blockCount(blockSize);
        long newBlocks = blockCount(blockSize);
        for (long lbn = 0; lbn < Math.max(oldBlocks, newBlocks); lbn++) {
            if (lbn >= newBlocks) {
                max++;
            } else if (lbn >= oldBlocks) {
                max++;
                if (!blockIsZero(lbn, blockSize)) {
                    min++;
                }
            } else if (!sameBlock(before, lbn, blockSize)) {
                min++;
                max++;
            }
        }
        return new long[] {min, max};
    }

    private boolean blockIsZero(long lbn, int blockSize) {
        int off = (int) (lbn * blockSize);
        int end = Math.min(length, off + blockSize);
        for (int i = off; i < end; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private boolean sameBlock(VolumeImage other, long lbn, int blockSize) {
        int off = (int) (lbn * blockSize);
        for (int i = off; i < off + blockSize; i++) {
            byte x = i < length ? bytes[i] : 0;
            byte y = i < other.length ? other.bytes[i] : 0;
            if (x != y) {
                return false;
            }
        }
        return true;
    }

    /** How many blocks of {@code blockSize} the image spans, the last one partial or not. */
    public long blockCount(int blockSize) {
        return (length + (long) blockSize - 1) / blockSize;
    }

    private static boolean isZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private void check(int off, int len) {
        if (off < 0 || len < 0 || off + len > length) {
            throw new IllegalArgumentException("region [" + off + ", " + (off + len) + ") outside image of " + length);
        }
    }

    private static MessageDigest sha() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
