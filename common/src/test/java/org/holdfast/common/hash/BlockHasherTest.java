package org.holdfast.common.hash;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BlockHasherTest {
    private final BlockHasher hasher = new BlockHasher();

    @Test
    void sha256_packedArray_matchesJdkDigestAtEachOffset() throws Exception {
        Random r = new Random(7);
        byte[] data = new byte[4 * 4096];
        r.nextBytes(data);
        byte[] packed = new byte[4 * 32];
        for (int i = 0; i < 4; i++) {
            hasher.sha256(data, i * 4096, 4096, packed, i * 32);
        }
        for (int i = 0; i < 4; i++) {
            byte[] expected = MessageDigest.getInstance("SHA-256").digest(Arrays.copyOfRange(data, i * 4096, (i + 1) * 4096));
            assertThat(Arrays.copyOfRange(packed, i * 32, i * 32 + 32)).isEqualTo(expected);
        }
    }

    @Test
    void sha256_directBuffer_matchesArrayAndKeepsPosition() {
        Random r = new Random(8);
        byte[] data = new byte[8192];
        r.nextBytes(data);
        ByteBuffer direct = ByteBuffer.allocateDirect(8192).put(data);
        direct.position(17);
        byte[] a = new byte[32];
        byte[] b = new byte[32];
        hasher.sha256(data, 4096, 4096, a, 0);
        hasher.sha256(direct, 4096, 4096, b, 0);
        assertThat(b).isEqualTo(a);
        assertThat(direct.position()).isEqualTo(17);
    }

    @Test
    void fingerprint_zeroBlock_allZeroFingerprintAndTrue() {
        byte[] fp = new byte[64];
        Arrays.fill(fp, (byte) 9);
        assertThat(hasher.fingerprint(new byte[4096], 0, 4096, fp, 32)).isTrue();
        assertThat(Arrays.copyOfRange(fp, 32, 64)).containsOnly(0);
        assertThat(Arrays.copyOfRange(fp, 0, 32)).containsOnly(9);
        assertThat(hasher.fingerprint(ByteBuffer.allocateDirect(4096), 0, 4096, fp, 0)).isTrue();
        assertThat(Arrays.copyOfRange(fp, 0, 32)).containsOnly(0);
    }

    @Test
    void fingerprint_nonZeroBlock_isSha256() {
        byte[] block = new byte[4096];
        block[4095] = 1;
        byte[] fp = new byte[32];
        byte[] sha = new byte[32];
        assertThat(hasher.fingerprint(block, 0, 4096, fp, 0)).isFalse();
        hasher.sha256(block, 0, 4096, sha, 0);
        assertThat(fp).isEqualTo(sha);
        assertThat(hasher.verify(block, 0, 4096, fp, 0, new byte[32])).isTrue();
        block[0] = 1;
        assertThat(hasher.verify(block, 0, 4096, fp, 0, new byte[32])).isFalse();
    }
}
