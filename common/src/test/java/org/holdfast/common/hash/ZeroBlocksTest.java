package org.holdfast.common.hash;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ZeroBlocksTest {

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 8, 63, 64, 65, 512, 4096, 4099})
    void isZero_allZeros_true(int len) {
        byte[] b = new byte[len + 3];
        assertThat(ZeroBlocks.isZero(b, 3, len)).isTrue();
        ByteBuffer direct = ByteBuffer.allocateDirect(len + 3);
        assertThat(ZeroBlocks.isZero(direct, 3, len)).isTrue();
        assertThat(ZeroBlocks.isZero(ByteBuffer.wrap(b), 3, len)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 8, 63, 64, 65, 512, 4096, 4099})
    void isZero_oneNonZeroByteAnywhere_false(int len) {
        for (int pos = 0; pos < len; pos += Math.max(1, len / 37)) {
            byte[] b = new byte[len + 5];
            b[2 + pos] = (byte) 0x80;
            assertThat(ZeroBlocks.isZero(b, 2, len)).as("byte at %d of %d", pos, len).isFalse();
            ByteBuffer d = ByteBuffer.allocateDirect(len + 5);
            d.put(2 + pos, (byte) 1);
            assertThat(ZeroBlocks.isZero(d, 2, len)).as("direct byte at %d of %d", pos, len).isFalse();
        }
        byte[] last = new byte[len];
        last[len - 1] = 1;
        assertThat(ZeroBlocks.isZero(last, 0, len)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(ints = {4096})
    void isZero_nonZeroOutsideRange_ignored(int len) {
        byte[] b = new byte[len + 2];
        b[0] = 1;
        b[len + 1] = 1;
        assertThat(ZeroBlocks.isZero(b, 1, len)).isTrue();
        ByteBuffer d = ByteBuffer.allocateDirect(len + 2);
        d.put(0, (byte) 1).put(len + 1, (byte) 1);
        d.position(len).limit(len + 2); // absolute indexing must ignore position
        assertThat(ZeroBlocks.isZero(d, 1, len)).isTrue();
        assertThat(d.position()).isEqualTo(len);
    }
}
