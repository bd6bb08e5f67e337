package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Arrays;
import java.util.Random;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Digests computed off the lane are exactly the SHA-256 of each decoded block, and bad payloads are reported where they are. */
class PayloadDigesterTest {
    private static final int BS = 4096;
    private final PayloadDigester digester = new PayloadDigester(2);
    private final BlockCodec codec = new BlockCodec();
    private final BlockHasher hasher = new BlockHasher();

    @AfterEach
    void close() {
        digester.close();
        codec.close();
    }

    @Test
    void digest_mixedFrameOverSeveralTasks_everyDigestIsTheBlocksSha256() {
        int n = 200;
        byte[][] blocks = new byte[n][];
        Random r = new Random(1);
        Blocks.Builder b = Blocks.builder(UnpooledByteBufAllocator.DEFAULT, n * BS);
        byte[] z = new byte[BlockCodec.maxCompressedLength(BS)];
        for (int i = 0; i < n; i++) {
            byte[] block = new byte[BS];
            if (i % 3 == 0) {
                r.nextBytes(block); // incompressible: travels raw
                b.add(i, PayloadCodec.RAW, block, 0, BS);
            } else {
                Arrays.fill(block, (byte) i); // compressible: travels as zstd
                block[i % BS] = 7;
                int zl = codec.compress(block, 0, BS, z, 0);
                assertThat(zl).isPositive();
                b.add(i, PayloadCodec.ZSTD, z, 0, zl);
            }
            blocks[i] = block;
        }
        assertDigestsAreTheBlocksSha256(b.build(), blocks);
    }

    @Test
    void digest_compressedFramesAcrossTaskBoundaries_decodedOnceEachAndEveryMemberHashed() {
        int n = 200;
        int frameBlocks = 24; // frames at 1, 25, 49 (crossing the task boundary at 64), ...
        byte[][] blocks = new byte[n][];
        byte[] raw = new byte[frameBlocks * BS];
        byte[] z = new byte[BlockCodec.maxCompressedLength(raw.length)];
        Blocks.Builder b = Blocks.builder(UnpooledByteBufAllocator.DEFAULT, n * BS);
        blocks[0] = new byte[BS];
        new Random(2).nextBytes(blocks[0]);
        b.add(0, PayloadCodec.RAW, blocks[0], 0, BS);
        for (int first = 1; first < n; first += frameBlocks) {
            int m = Math.min(frameBlocks, n - first);
            for (int k = 0; k < m; k++) {
                blocks[first + k] = new byte[BS];
                Arrays.fill(blocks[first + k], (byte) (first + k));
                System.arraycopy(blocks[first + k], 0, raw, k * BS, BS);
            }
            int zl = codec.compress(raw, 0, m * BS, z, 0);
            b.addFrame(first, z, 0, zl);
            for (int k = 1; k < m; k++) {
                b.addFrameMember(first + k);
            }
        }
        assertDigestsAreTheBlocksSha256(b.build(), blocks);
    }

    /** Digests {@code frame} on the pool; every block's digest must be the SHA-256 of {@code blocks[i]}. Releases the frame. */
    private void assertDigestsAreTheBlocksSha256(Blocks frame, byte[][] blocks) {
        try {
            PayloadDigester.FrameDigests d = digester.digest(frame, BS).join();
            byte[] fp = new byte[32];
            for (int i = 0; i < blocks.length; i++) {
                assertThat(d.errorAt(i)).as("block %d", i).isNull();
                hasher.sha256(blocks[i], 0, BS, fp, 0);
                assertThat(Arrays.copyOfRange(d.digests, i * 32, i * 32 + 32)).as("digest of block %d", i).isEqualTo(fp);
            }
        } finally {
            frame.release();
        }
    }

    @Test
    void digest_undecodableFrame_reportedAtItsFirstBlock() {
        Blocks.Builder b = Blocks.builder(UnpooledByteBufAllocator.DEFAULT, 64);
        b.addFrame(10, new byte[] {9, 8, 7, 6, 5}, 0, 5).addFrameMember(11).addFrameMember(12);
        Blocks frame = b.build();
        try {
            PayloadDigester.FrameDigests d = digester.digest(frame, BS).join();
            assertThat(d.errorAt(0)).isNotNull();
            assertThat(d.errorAt(0).code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(d.errorAt(0).getMessage()).contains("zstd frame of LBN 10").contains("nothing of it is stored");
        } finally {
            frame.release();
        }
    }

    @Test
    void digest_badPayloadsInTwoTasks_firstOneIsReportedAtItsIndex() {
        int n = 150;
        Blocks.Builder b = Blocks.builder(UnpooledByteBufAllocator.DEFAULT, n * BS);
        byte[] block = new byte[BS];
        for (int i = 0; i < n; i++) {
            if (i == 70) {
                b.add(i, PayloadCodec.ZSTD, new byte[] {1, 2, 3, 4, 5}, 0, 5); // not zstd
            } else if (i == 130) {
                b.add(i, PayloadCodec.RAW, block, 0, BS / 2); // raw of the wrong length
            } else {
                b.add(i, PayloadCodec.RAW, block, 0, BS);
            }
        }
        Blocks frame = b.build();
        try {
            PayloadDigester.FrameDigests d = digester.digest(frame, BS).join();
            ProtocolException e = d.errorAt(70);
            assertThat(e).isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("LBN 70").contains("zstd");
            assertThat(d.errorAt(130)).as("only the first bad payload is reported").isNull();
            assertThat(d.errorAt(69)).isNull();
        } finally {
            frame.release();
        }
    }

    @Test
    void digest_rawPayloadOfWrongLength_badFrameNamingTheLbn() {
        Blocks.Builder b = Blocks.builder(UnpooledByteBufAllocator.DEFAULT, BS);
        b.add(42, PayloadCodec.RAW, new byte[BS + 1], 0, BS + 1);
        Blocks frame = b.build();
        try {
            ProtocolException e = digester.digest(frame, BS).join().errorAt(0);
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("LBN 42").contains("4097");
        } finally {
            frame.release();
        }
    }
}
