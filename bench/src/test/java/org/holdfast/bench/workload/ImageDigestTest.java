package org.holdfast.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageDigestTest {
    @TempDir
    Path tmp;

    @Test
    void digest_firstThenChangedState_countsChangesAgainstTheStateBefore() throws IOException {
        Path p = tmp.resolve("v.img");
        ImageDigest d = new ImageDigest();
        try (VolumeImage img = VolumeImage.create(p, 16 * BlockContent.BLOCK)) {
            img.writeBlock(3, BlockContent.Kind.RANDOM, 1, BlockContent.BLOCK);
            img.writeBlock(4, BlockContent.Kind.TEXT, 2, BlockContent.BLOCK);
        }
        ImageDigest.State first = d.digest(p);
        try (VolumeImage img = VolumeImage.open(p)) {
            img.writeBytes(3L * BlockContent.BLOCK, new byte[BlockContent.BLOCK], 0, BlockContent.BLOCK);
            img.writeBlock(9, BlockContent.Kind.BINARY, 3, BlockContent.BLOCK);
        }
        ImageDigest.State second = d.digest(p);

        assertThat(first.changedBlocks()).as("day 0 against an empty volume").isEqualTo(2);
        assertThat(first.zeroBlocks()).isEqualTo(14);
        assertThat(first.changedZeroBlocks()).isZero();
        assertThat(second.changedBlocks()).isEqualTo(2);
        assertThat(second.changedZeroBlocks()).isEqualTo(1);
        assertThat(second.sha256()).isEqualTo(ImageDigest.sha256(p)).isNotEqualTo(first.sha256());
    }
}
