package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.StoredBlock;

/** Blocks and their fingerprints for the tests of range data on the worker link. */
public final class RangeBlocks {
    /** The block size these tests store. */
    public static final int BS = 4096;

    private RangeBlocks() {
    }

    /** {@code n} blocks from {@code seed}: random bytes, or mostly zeros (so zstd pays) if {@code compressible}. */
    public static byte[] blocks(long seed, int n, boolean compressible) {
        byte[] b = new byte[n * BS];
        Random r = new Random(seed);
        if (compressible) {
            for (int i = 0; i < b.length; i += 64) {
                b[i] = (byte) r.nextInt();
            }
        } else {
            r.nextBytes(b);
        }
        return b;
    }

    /** The SHA-256 fingerprints of the blocks in {@code raw}, 32 bytes each. */
    public static byte[] fps(byte[] raw) {
        int n = raw.length / BS;
        byte[] f = new byte[n * 32];
        for (int k = 0; k < n; k++) {
            BlockHasher.forCurrentThread().sha256(raw, k * BS, BS, f, k * 32);
        }
        return f;
    }

    /** Appends each block of {@code blocks} raw to {@code s}; returns their PBNs. */
    static long[] appendRaw(DataStore s, byte[] blocks) {
        byte[] fps = fps(blocks);
        long[] pbns = new long[blocks.length / BS];
        for (int k = 0; k < pbns.length; k++) {
            pbns[k] = s.append(fps, k * 32, blocks, k * BS, BS, FormatVersions.CODEC_RAW, BS);
        }
        return pbns;
    }

    /** Reads {@code pbns} from {@code c} in one batch: each block is {@code expected}'s, with its fingerprint. */
    static void assertCopyReads(RangeCopy c, long[] pbns, byte[] expected) {
        BlockBatch b = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
        byte[] fps = fps(expected);
        assertThat(c.readBatch(pbns, 0, pbns.length, b)).isEqualTo(pbns.length);
        try (BlockCodec codec = new BlockCodec()) {
            for (int k = 0; k < pbns.length; k++) {
                byte[] out = new byte[BS];
                b.decode(k, codec, out, 0);
                assertThat(out).as("PBN " + pbns[k]).isEqualTo(Arrays.copyOfRange(expected, k * BS, (k + 1) * BS));
                assertThat(Arrays.copyOfRange(b.fingerprints(), b.fingerprintOffset(k), b.fingerprintOffset(k) + 32))
                        .isEqualTo(Arrays.copyOfRange(fps, k * 32, k * 32 + 32));
            }
        }
    }

    /** Reads each of {@code pbns} from {@code s}: block k is {@code raw}'s k-th, with its fingerprint. */
    static void assertStoreReads(DataStore s, long[] pbns, byte[] raw) {
        StoredBlock b = new StoredBlock();
        byte[] fps = fps(raw);
        byte[] out = new byte[BS];
        try (BlockCodec codec = new BlockCodec()) {
            for (int k = 0; k < pbns.length; k++) {
                s.read(pbns[k], b);
                codec.decode(b.codec(), b.data(), b.dataOffset(), b.storedLength(), out, 0, BS);
                assertThat(out).as("block " + k + " (PBN " + pbns[k] + ")").isEqualTo(Arrays.copyOfRange(raw, k * BS, (k + 1) * BS));
                assertThat(b.fingerprint()).isEqualTo(Arrays.copyOfRange(fps, k * 32, k * 32 + 32));
            }
        }
    }

    /** Where in {@code log} (a sealed log's bytes) the record of {@code lastBlock}, stored raw as its last record, begins. */
    static int lastRecordAt(byte[] log, byte[] lastBlock) {
        for (int i = log.length - lastBlock.length; i >= 0; i--) {
            if (Arrays.equals(log, i, i + lastBlock.length, lastBlock, 0, lastBlock.length)) {
                return i - FormatVersions.RECORD_HEADER_BYTES;
            }
        }
        return -1;
    }
}
