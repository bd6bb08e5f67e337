package org.holdfast.server.e2e;

import org.holdfast.server.e2e.VolumeImage.Content;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The image generator the end-to-end tests rely on: deterministic, and its change accounting right. */
class VolumeImageTest {
    private static final int BLOCK = 4096;

    @Test
    void generate_sameSeed_sameBytes() {
        assertThat(VolumeImage.generate(7, 3 << 20).sha256()).isEqualTo(VolumeImage.generate(7, 3 << 20).sha256());
        assertThat(VolumeImage.generate(7, 3 << 20).sha256()).isNotEqualTo(VolumeImage.generate(8, 3 << 20).sha256());
    }

    @Test
    void generate_eightMiB_mixesUniqueAndZeroBlocks() {
        VolumeImage img = VolumeImage.generate(1, 8 << 20);
        int distinct = img.blockFingerprints(BLOCK).size();
        assertThat(distinct).as("non-zero blocks are (nearly all) distinct").isGreaterThan(1000).isLessThan(2048);
    }

    @Test
    void changedBlockRange_oneBlockRewritten_exactlyOne() {
        VolumeImage before = VolumeImage.generate(2, 1 << 20).fill(0, 1 << 20, Content.RANDOM);
        VolumeImage after = before.copy(3).fill(5 * BLOCK, BLOCK, Content.RANDOM);
        assertThat(after.changedBlockRange(before, BLOCK)).containsExactly(1, 1);
    }

    @Test
    void changedBlockRange_appendOfZerosAndShrink_countedOnlyInTheMaximum() {
        VolumeImage before = VolumeImage.generate(2, 1 << 20).fill(0, 1 << 20, Content.RANDOM);
        VolumeImage grown = before.copy(3).append(2 * BLOCK, Content.ZERO);
        assertThat(grown.changedBlockRange(before, BLOCK)).containsExactly(0, 2);
        VolumeImage shrunk = before.copy(4).truncate((1 << 20) - BLOCK);
        assertThat(shrunk.changedBlockRange(before, BLOCK)).containsExactly(0, 1);
    }

    @Test
    void move_unalignedByFewBytes_changesEveryBlockOfTheRegion() {
        VolumeImage before = VolumeImage.generate(2, 1 << 20).fill(0, 1 << 20, Content.RANDOM);
        VolumeImage after = before.copy(3).move(0, 777, 10 * BLOCK);
        assertThat(after.changedBlockRange(before, BLOCK)).containsExactly(11, 11);
    }
}
