package org.holdfast.common.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;

class PossessionProofTest {
    private final Random random = new Random(7);

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    @Test
    void tag_sameSecretAndContent_sameTagFromAnyOffsetAndFromPf() {
        byte[] secret = bytes(32);
        byte[] block = bytes(4096);
        PossessionProof agent = new PossessionProof(secret);
        PossessionProof server = new PossessionProof(secret);
        byte[] inSlab = new byte[8192];
        System.arraycopy(block, 0, inSlab, 100, block.length);
        byte[] pf = new byte[PossessionProof.PF_BYTES];
        PossessionProof.pf(block, 0, block.length, pf, 0, new long[2]);

        long fromArray = agent.tag(block, 0, block.length);
        assertThat(agent.tag(inSlab, 100, 4096)).isEqualTo(fromArray);
        assertThat(server.tag(pf, 0)).isEqualTo(fromArray);
    }

    @Test
    void tag_otherSecret_otherTag() {
        byte[] block = bytes(4096);
        byte[] secret = bytes(32);
        byte[] other = secret.clone();
        other[17] ^= 1; // a bit outside the bytes that seed the hash still changes the tag
        assertThat(new PossessionProof(secret).tag(block, 0, 4096)).isNotEqualTo(new PossessionProof(other).tag(block, 0, 4096));
    }

    @Test
    void pf_oneBitOfContentChanged_differs() {
        byte[] block = bytes(4096);
        byte[] a = new byte[16];
        byte[] b = new byte[16];
        PossessionProof.pf(block, 0, 4096, a, 0, new long[2]);
        block[4095] ^= 1;
        PossessionProof.pf(block, 0, 4096, b, 0, new long[2]);
        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void pf_fixedInput_matchesGoldenValue() {
        // The server stores pf per PBN: a change of seed or algorithm would invalidate every stored one.
        byte[] block = new byte[4096];
        for (int i = 0; i < block.length; i++) {
            block[i] = (byte) i;
        }
        byte[] pf = new byte[16];
        PossessionProof.pf(block, 0, block.length, pf, 0, new long[2]);
        assertThat(java.util.HexFormat.of().formatHex(pf)).isEqualTo(GOLDEN_PF);
    }

    static final String GOLDEN_PF = "af1654145e0c4c15bb3909d9da66bd26";

    @Test
    void new_wrongSecretLength_refused() {
        assertThatThrownBy(() -> new PossessionProof(new byte[31])).isInstanceOf(IllegalArgumentException.class);
    }
}
