package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.common.protocol.ProtocolLimits;
import org.junit.jupiter.api.Test;

class SentFramesTest {
    @Test
    void find_knowsEveryFrameOfTheMessage_andNothingAfterClear() {
        SentFrames f = new SentFrames();
        int n = ProtocolLimits.MAX_BLOCKS_PER_FRAME; // the most frames one message can hold
        for (int i = 0; i < n; i++) {
            f.add(i % 3, 32L + 4096L * i, i);
        }
        for (int i = 0; i < n; i++) {
            assertThat(f.find(i % 3, 32L + 4096L * i)).isEqualTo(i);
        }
        assertThat(f.find(1, 32L)).as("same offset, other log").isEqualTo(-1);
        f.clear();
        assertThat(f.find(0, 32L)).isEqualTo(-1);
        f.add(7, 32L, 0);
        assertThat(f.find(7, 32L)).isZero();
    }
}
