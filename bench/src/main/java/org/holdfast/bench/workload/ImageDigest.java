package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The bench's own ground truth about one image state: its SHA-256 (what a restore must
 * reproduce), its size, how many 4 KiB blocks are all zero, and how many blocks differ from the
 * previous state (the first state is compared with an all-zero volume). Changed blocks are found with a 64-bit hash per block kept from the previous
 * call, so no old image has to be kept.
 */
public final class ImageDigest {
    private static final int CHUNK = 1 << 20;

    private long[] previous;

    /** The result of digesting one state. */
    public record State(String sha256, long bytes, long zeroBlocks, long changedBlocks, long changedZeroBlocks, long blocks) {
        /** Bytes of the blocks that differ from the previous state (the non-zero ones for the first). */
        public long changedBytes() {
            return changedBlocks * BlockContent.BLOCK;
        }
    }

    /** Reads the whole image once. */
    public State digest(Path image) throws IOException {
        MessageDigest sha = sha256();
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ)) {
            long size = ch.size();
            long blocks = (size + BlockContent.BLOCK - 1) / BlockContent.BLOCK;
            long[] hashes = new long[Math.toIntExact(blocks)];
            ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK).order(ByteOrder.LITTLE_ENDIAN);
            long pos = 0;
            long zero = 0;
            long changed = 0;
            long changedZero = 0;
            int block = 0;
            while (pos < size) {
                buf.clear();
                int n = 0;
                while (buf.hasRemaining()) {
                    int r = ch.read(buf, pos + n);
                    if (r < 0) {
                        break;
                    }
                    n += r;
                }
                buf.flip();
                sha.update(buf.duplicate());
                for (int off = 0; off < n; off += BlockContent.BLOCK, block++) {
                    int len = Math.min(BlockContent.BLOCK, n - off);
                    long h = 0x9e3779b97f4a7c15L;
                    long or = 0;
                    int i = off;
                    for (; i + 8 <= off + len; i += 8) {
                        long v = buf.getLong(i);
                        or |= v;
                        h = (h ^ v) * 0xff51afd7ed558ccdL;
                        h ^= h >>> 29;
                    }
                    for (; i < off + len; i++) {
                        byte v = buf.get(i);
                        or |= v;
                        h = (h ^ v) * 0xff51afd7ed558ccdL;
                    }
                    if (or == 0) {
                        zero++;
                    }
                    hashes[block] = h;
                    // Day 0 is compared with an empty (all-zero) volume, as an agent without state sees it.
                    boolean differs = previous == null || block >= previous.length ? or != 0 : previous[block] != h;
                    if (differs) {
                        changed++;
                        if (or == 0) {
                            changedZero++;
                        }
                    }
                }
                pos += n;
                if (n == 0) {
                    break;
                }
            }
            previous = hashes;
            return new State(HexFormat.of().formatHex(sha.digest()), size, zero, changed, changedZero, blocks);
        }
    }

    /** SHA-256 of a whole file, for checking restores. */
    public static String sha256(Path file) throws IOException {
        MessageDigest sha = sha256();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK);
            while (ch.read(buf) >= 0) {
                buf.flip();
                sha.update(buf);
                buf.clear();
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    }
}
