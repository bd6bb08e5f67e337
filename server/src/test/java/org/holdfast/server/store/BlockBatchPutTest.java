package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Random;
import org.holdfast.common.compress.BlockCodec;
import org.junit.jupiter.api.Test;

/** Blocks read elsewhere (a worker's DATA_READ answer) put into a restore's batch read back as a local batch does. */
class BlockBatchPutTest {
    private static final int BS = 4096;

    @Test
    void put_rawAndZstdBlocks_readBackWithTheirPbnsCodecsFingerprintsAndBytes() {
        BlockBatch batch = new BlockBatch(4, 3 * BS, BS);
        byte[] raw = new byte[BS];
        new Random(1).nextBytes(raw);
        byte[] plain = new byte[BS];
        plain[100] = 7;
        byte[] z = new byte[BlockCodec.maxCompressedLength(BS)];
        byte[] fps = new byte[64];
        Arrays.fill(fps, 0, 32, (byte) 1);
        Arrays.fill(fps, 32, 64, (byte) 2);
        try (BlockCodec codec = new BlockCodec()) {
            int zl = codec.compress(plain, 0, BS, z, 0);
            batch.clear();
            assertThat(batch.put(10, fps, 0, FormatVersions.CODEC_RAW, BS, raw, 0, BS)).isTrue();
            assertThat(batch.put(11, fps, 32, FormatVersions.CODEC_ZSTD, BS, z, 0, zl)).isTrue();
            assertThat(batch.count()).isEqualTo(2);
            assertThat(batch.pbn(1)).isEqualTo(11);
            assertThat(batch.codec(0)).isEqualTo(FormatVersions.CODEC_RAW);
            assertThat(batch.codec(1)).isEqualTo(FormatVersions.CODEC_ZSTD);
            assertThat(batch.rawLength(1)).isEqualTo(BS);
            assertThat(batch.storedLength(1)).isEqualTo(zl);
            assertThat(batch.frameMembers(1)).isEqualTo(1);
            assertThat(Arrays.copyOfRange(batch.fingerprints(), batch.fingerprintOffset(1), batch.fingerprintOffset(1) + 32))
                    .containsOnly(2);
            byte[] out = new byte[BS];
            batch.decode(0, codec, out, 0);
            assertThat(out).isEqualTo(raw);
            batch.decode(1, codec, out, 0);
            assertThat(out).isEqualTo(plain);
        }
    }

    @Test
    void put_bufferFull_returnsFalseAndAddsNothing_frameCodecRefused() {
        BlockBatch batch = new BlockBatch(8, 2 * BS, BS);
        byte[] raw = new byte[BS];
        byte[] fp = new byte[32];
        batch.clear();
        assertThat(batch.put(1, fp, 0, FormatVersions.CODEC_RAW, BS, raw, 0, BS)).isTrue();
        assertThat(batch.put(2, fp, 0, FormatVersions.CODEC_RAW, BS, raw, 0, BS)).as("a second record and its header do not fit 2 blocks")
                .isFalse();
        assertThat(batch.count()).isEqualTo(1);
        assertThatThrownBy(() -> batch.put(3, fp, 0, FormatVersions.CODEC_FRAME, BS, raw, 0, BS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("raw or zstd");
        batch.clear();
        assertThat(batch.count()).isZero();
    }
}
