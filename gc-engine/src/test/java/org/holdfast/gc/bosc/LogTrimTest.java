package org.holdfast.gc.bosc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.GmaProbe;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The GC log holds no committed records at rest: it is trimmed once the checkpoint passes them, crash-safely. */
class LogTrimTest {
    @TempDir
    Path dir;

    @AfterEach
    void disarm() {
        KillPoints.disarm();
    }

    private static BoscSettings settings() {
        return BoscSettings.defaults().withCommitIdle(Duration.ofMillis(2));
    }

    private static UpdateBatch op(int i) {
        UpdateBatch b = new UpdateBatch();
        Random r = new Random(i);
        for (int k = 0; k < 6; k++) {
            b.add(UpdateKinds.RC_ADD, 1 + r.nextInt(100_000), 1);
        }
        return b;
    }

    private void appendOps(BoscPipeline p, int from, int to) {
        for (int i = from; i <= to; i++) {
            p.appendGroup(i, op(i));
        }
    }

    private long logBytes() throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve("log"))) {
            return s.mapToLong(f -> f.toFile().length()).sum();
        }
    }

    private List<Path> segments() throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve("log"))) {
            return s.sorted().toList();
        }
    }

    @Test
    void orderlyClose_leavesOneEmptySegment_andReopenReplaysNothing() throws Exception {
        TreeMap<Long, String> state;
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            appendOps(p, 1, 2000); // 16,000 records, 464,000 bytes of log
            p.commitAll();
            state = GmaProbe.dump(p);
        }
        assertThat(segments()).hasSize(1);
        assertThat(logBytes()).isZero();
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            assertThat(p.replayedRecords()).isZero();
            assertThat(p.lastOpId()).isEqualTo(2000);
            assertThat(GmaProbe.dump(p)).isEqualTo(state);
        }
    }

    @Test
    void runningLog_committedPastTrimSize_isTrimmedWithoutAStop() throws Exception {
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            appendOps(p, 1, 2000);
            p.commitAll(); // checkpoint past every record: the idle flusher trims
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (logBytes() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(logBytes()).as("log bytes while running, after the checkpoint passed every record").isZero();
            appendOps(p, 2001, 2100); // the log goes on in the new segment
            TreeMap<Long, String> state = GmaProbe.dump(p);
            p.awaitDurable();
            p.abandon(); // crash: the new records are only in the log
            try (BoscPipeline q = BoscPipeline.open(dir, settings())) {
                assertThat(q.lastOpId()).isEqualTo(2100);
                assertThat(GmaProbe.dump(q)).isEqualTo(state);
            }
        }
    }

    @Test
    void killedBetweenNewSegmentAndDelete_reopenSkipsAndDeletesTheOldSegments() throws Exception {
        TreeMap<Long, String> state;
        try (BoscPipeline ref = BoscPipeline.open(dir.resolve("ref"), settings())) {
            appendOps(ref, 1, 1000);
            state = GmaProbe.dump(ref);
        }
        dir = dir.resolve("killed");
        KillPoints.arm(KillPoints.GC_LOG_TRIM_AFTER_NEW_SEGMENT, 1, KillPoints.Mode.THROW);
        BoscPipeline p = BoscPipeline.open(dir, settings());
        appendOps(p, 1, 1000);
        // the idle flusher may reach the point first (after a committer's checkpoint), else close does
        try {
            p.close();
        } catch (KillPoints.Killed expected) {
            // killed: the empty segment at the checkpoint exists, the old one too
        }
        p.abandon();
        assertThat(KillPoints.reached()).contains(KillPoints.GC_LOG_TRIM_AFTER_NEW_SEGMENT.name());
        try (BoscPipeline q = BoscPipeline.open(dir, settings())) {
            assertThat(q.lastOpId()).isEqualTo(1000);
            assertThat(GmaProbe.dump(q)).isEqualTo(state);
            assertThat(q.replayedRecords()).as("old segments are wholly below the checkpoint").isZero();
            appendOps(q, 1001, 1010);
        }
        assertThat(segments()).hasSize(1);
        assertThat(logBytes()).isZero();
        try (BoscPipeline q = BoscPipeline.open(dir, settings())) {
            assertThat(q.lastOpId()).isEqualTo(1010);
        }
    }
}
