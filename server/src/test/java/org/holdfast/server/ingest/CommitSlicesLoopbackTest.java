package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.holdfast.common.protocol.Committed;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume of more than one input segment (U_segment 4,096) whose repeated blocks (followers) sit on
 * the commit path's slice boundaries (64 entries) and the segment boundary, backed up in full and
 * incrementally, and once more as a second volume that dedups through the segments the engine
 * learned: follower resolution, segment recording and the session map's fill go a slice per call,
 * and every snapshot must restore bit for bit.
 */
class CommitSlicesLoopbackTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 4096 + 66;
    private static final int[] REPEATS = {63, 64, 65, 127, 128, 4095, 4096, 4097, BLOCKS - 1};

    @TempDir
    Path dir;

    private IngestHarness harness;

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private static void copyBlock(byte[] img, int from, int to) {
        System.arraycopy(img, from * BS, img, to * BS, BS);
    }

    @Test
    void followersOnSliceAndSegmentBoundaries_fullAndIncremental_restoreBitForBit() {
        byte[] v1 = new byte[BLOCKS * BS];
        new Random(29).nextBytes(v1);
        Arrays.fill(v1, 0, BS, (byte) 0);
        for (int r : REPEATS) {
            copyBlock(v1, 10, r);
        }
        byte[] v2 = Arrays.copyOf(v1, (BLOCKS - 3) * BS); // cut inside the last slice
        Random r2 = new Random(30);
        for (int lbn : new int[] {62, 63, 64, 66, 4094, 4096, 4098}) {
            byte[] b = new byte[BS];
            r2.nextBytes(b);
            System.arraycopy(b, 0, v2, lbn * BS, BS);
        }
        copyBlock(v2, 64, 128); // a new block twice in the increment
        copyBlock(v2, 64, 4095);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            Committed c1 = a.backup("slices", v1, BS, false);
            assertThat(c1.sentBlocks()).as("each repeat uploaded once, the zero block never").isEqualTo(BLOCKS - 1 - REPEATS.length);
            // a second volume of the same content dedups through what the engine learned of the first's segments
            Committed copy = a.backup("copy", v1, BS, false);
            assertThat(copy.sentBlocks()).as("every block found in the learned segments").isZero();
            assertThat(a.restore("copy", 1).image()).as("the copy restores bit for bit").isEqualTo(v1);
            Committed c2 = a.backup("slices", v2, BS, true);
            assertThat(c2.sentBlocks()).as("the seven changed blocks, one of them three times").isEqualTo(7);
            for (int seq = 1; seq <= 2; seq++) {
                byte[] want = seq == 1 ? v1 : v2;
                AgentDriver.Restored r = a.restore("slices", seq);
                assertThat(r.image()).as("snapshot %d restores bit for bit", seq).isEqualTo(want);
            }
        }
    }
}
