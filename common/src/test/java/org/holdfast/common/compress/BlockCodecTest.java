package org.holdfast.common.compress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import java.util.Arrays;
import java.util.Random;
import org.holdfast.common.protocol.PayloadCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BlockCodecTest {
    private final BlockCodec codec = new BlockCodec();

    @AfterEach
    void close() {
        codec.close();
    }

    private static byte[] text(int len) {
        byte[] b = new byte[len];
        String s = "the quick brown fox jumps over the lazy dog 0123456789 ";
        for (int i = 0; i < len; i++) {
            b[i] = (byte) s.charAt(i % s.length());
        }
        return b;
    }

    @Test
    void compress_compressibleBlock_roundTripsExactly() {
        byte[] block = text(4096);
        byte[] packed = new byte[BlockCodec.maxCompressedLength(4096)];
        int n = codec.compress(block, 0, 4096, packed, 0);
        assertThat(n).isPositive().isLessThan(4096 / 4);
        byte[] out = new byte[4096 + 10];
        codec.decompress(packed, 0, n, out, 10, 4096);
        assertThat(Arrays.copyOfRange(out, 10, 4106)).isEqualTo(block);
    }

    @Test
    void compress_randomBlock_storedRaw() {
        byte[] block = new byte[4096];
        new Random(1).nextBytes(block);
        assertThat(codec.compress(block, 0, 4096, new byte[8192], 0)).isEqualTo(-1);
    }

    @Test
    void compress_randomBlockWithRoomBelowZstdBound_storedRaw() {
        byte[] block = new byte[4096];
        new Random(2).nextBytes(block);
        assertThat(codec.compress(block, 0, 4096, new byte[4096], 0)).isEqualTo(-1);
        assertThat(codec.compress(text(4096), 0, 4096, new byte[4096], 0)).isPositive();
    }

    @Test
    void decompress_payloadDeclaringLargerBlock_refusedWithoutOverflow() {
        byte[] big = Zstd.compress(text(8192), 1);
        byte[] out = new byte[4096 + 16];
        Arrays.fill(out, (byte) 0x55);
        assertThatThrownBy(() -> codec.decompress(big, 0, big.length, out, 0, 4096))
                .isInstanceOf(CorruptPayloadException.class);
        assertThat(Arrays.copyOfRange(out, 4096, 4112)).containsOnly(0x55);
    }

    @Test
    void decompress_payloadOfSmallerBlock_refused() {
        byte[] small = Zstd.compress(text(1000), 1);
        assertThatThrownBy(() -> codec.decompress(small, 0, small.length, new byte[4096], 0, 4096))
                .isInstanceOf(CorruptPayloadException.class).hasMessageContaining("1000");
    }

    @Test
    void decompress_garbage_refused() {
        byte[] junk = new byte[300];
        new Random(3).nextBytes(junk);
        assertThatThrownBy(() -> codec.decompress(junk, 0, junk.length, new byte[4096], 0, 4096))
                .isInstanceOf(CorruptPayloadException.class);
    }

    @Test
    void decompress_payloadOverSlack_refusedBeforeDecoding() {
        assertThatThrownBy(() -> codec.decompress(new byte[9000], 0, 9000, new byte[4096], 0, 4096))
                .isInstanceOf(CorruptPayloadException.class).hasMessageContaining("over the limit");
    }

    @Test
    void decode_rawWrongLength_refused() {
        assertThatThrownBy(() -> codec.decode(PayloadCodec.RAW, new byte[100], 0, 100, new byte[4096], 0, 4096))
                .isInstanceOf(CorruptPayloadException.class);
    }

    @Test
    void compress_negativeLevel_stillRoundTrips() {
        try (BlockCodec fast = new BlockCodec(-3)) {
            byte[] block = text(65536);
            byte[] packed = new byte[BlockCodec.maxCompressedLength(65536)];
            int n = fast.compress(block, 0, block.length, packed, 0);
            assertThat(n).isPositive();
            byte[] out = new byte[65536];
            fast.decode(PayloadCodec.ZSTD, packed, 0, n, out, 0, 65536);
            assertThat(out).isEqualTo(block);
        }
    }
}
