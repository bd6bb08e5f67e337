package org.holdfast.client.restore;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DirectWritesTest {
    @Test
    void suits_onlyBlocksOfWholePages_onFileSystemBlocksThatDivideAPage() {
        assertThat(DirectWrites.suits(4096, 4096)).isTrue();
        assertThat(DirectWrites.suits(1024, 4096)).isTrue(); // a small ext4 (1 KiB blocks), 4 KiB restore blocks
        assertThat(DirectWrites.suits(4096, 1 << 20)).isTrue();
        // 1 or 2 KiB restore blocks share a 4 KiB page with a neighbour: the buffered partial last
        // block (or the fallback) and another thread's direct write would meet in one cached page
        assertThat(DirectWrites.suits(1024, 1024)).isFalse();
        assertThat(DirectWrites.suits(1024, 2048)).isFalse();
        assertThat(DirectWrites.suits(512, 512)).isFalse();
        assertThat(DirectWrites.suits(4096, 1024)).isFalse();
        assertThat(DirectWrites.suits(65536, 65536)).isFalse(); // O_DIRECT needs the file system's block: over ALIGN
        assertThat(DirectWrites.suits(0, 4096)).isFalse();
    }
}
