package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The flow-control rules of one connection's lane: reading pauses at either bound, and NEEDs are
 * flushed once nothing else waits or every {@link LaneBacklog#FLUSH_NEEDS}, never left unflushed
 * when the lane runs dry.
 */
class LaneBacklogTest {

    @Test
    void hasRoom_atEitherBound_false() {
        LaneBacklog frames = new LaneBacklog(2, 1_000);
        frames.queued(10);
        assertThat(frames.hasRoom()).isTrue();
        frames.queued(10);
        assertThat(frames.hasRoom()).as("two frames of two").isFalse();
        frames.done(10);
        assertThat(frames.hasRoom()).isTrue();

        LaneBacklog bytes = new LaneBacklog(100, 1_000);
        bytes.queued(1_000);
        assertThat(bytes.hasRoom()).as("1000 bytes of 1000").isFalse();
        bytes.done(1_000);
        assertThat(bytes.hasRoom()).isTrue();
    }

    @Test
    void flushNeedsNow_lastFrameOrEverySixtyFour() {
        LaneBacklog backlog = new LaneBacklog(1_000, 1L << 30);
        assertThat(backlog.flushNeedsNow()).as("nothing written").isFalse();
        for (int i = 0; i < 10; i++) {
            backlog.queued(100);
        }
        backlog.needWritten();
        assertThat(backlog.flushNeedsNow()).as("nine more frames wait: their NEEDs join this one").isFalse();
        for (int i = 1; i < LaneBacklog.FLUSH_NEEDS; i++) {
            backlog.needWritten();
        }
        assertThat(backlog.flushNeedsNow()).as("64 NEEDs unflushed").isTrue();
        backlog.needWritten();
        for (int i = 0; i < 9; i++) {
            backlog.done(100);
        }
        assertThat(backlog.flushNeedsNow()).as("only the frame being handled is left").isTrue();
        assertThat(backlog.flushNeedsNow()).as("flushed: the count started again").isFalse();
    }
}
