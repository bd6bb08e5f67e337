package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ReferenceGuard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup session bounded to 1024 in-memory entries checkpoints and spills every ENTRIES run, and
 * still commits the same snapshot: restores bit for bit, uploads each distinct block once (a
 * duplicate of a checkpointed block is found through the engine), and leaves no spill file.
 */
class SessionSpillLoopbackTest {
    private static final int BS = 512;
    private static final int RUN = ProtocolLimits.MAX_RUN_ENTRIES;
    private static final int BLOCKS = 16 * RUN;

    @TempDir
    Path dir;

    private Path spillDir;
    private IngestHarness harness;

    @BeforeEach
    void start() throws IOException {
        spillDir = Files.createDirectories(dir.resolve("spill"));
        harness = new IngestHarness(dir.resolve("server"), 0, ReferenceGuard.NONE,
                IngestSettings.loopback().withSpill(new SessionSpill(spillDir, 1024)));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    /** Unique, compressible blocks, with zero blocks, duplicates within a run and duplicates 5000 LBNs back. */
    static byte[] image(int blocks, int salt) {
        byte[] img = new byte[blocks * BS];
        ByteBuffer b = ByteBuffer.wrap(img);
        for (int i = 0; i < blocks; i++) {
            if (i % 1000 == 999) {
                continue;
            }
            if (i >= 5000 && i % 97 == 0) {
                System.arraycopy(img, (i - 5000) * BS, img, i * BS, BS);
            } else if (i % 97 == 50) {
                System.arraycopy(img, (i - 1) * BS, img, i * BS, BS);
            } else {
                b.putLong(i * BS, i + 1);
                b.putInt(i * BS + 100, salt);
            }
        }
        return img;
    }

    private static long nonZero(byte[] img) {
        ByteBuffer zero = ByteBuffer.wrap(new byte[BS]);
        long n = 0;
        for (int i = 0; i < img.length / BS; i++) {
            n += ByteBuffer.wrap(img, i * BS, BS).slice().equals(zero) ? 0 : 1;
        }
        return n;
    }

    private static long distinctNonZero(byte[] img) {
        Set<ByteBuffer> seen = new HashSet<>();
        ByteBuffer zero = ByteBuffer.wrap(new byte[BS]);
        for (int i = 0; i < img.length / BS; i++) {
            ByteBuffer blk = ByteBuffer.wrap(img, i * BS, BS).slice();
            if (!blk.equals(zero)) {
                seen.add(blk);
            }
        }
        return seen.size();
    }

    private List<Path> spillFiles() throws IOException {
        try (Stream<Path> s = Files.list(spillDir)) {
            return s.toList();
        }
    }

    /** Backs up {@code img} one ENTRIES run at a time, so each run is answered before the next (as a windowed agent does). */
    private Committed backupRunByRun(AgentDriver a, String volume, byte[] img, boolean checkSpill) throws IOException {
        a.begin(volume, BS, img.length, 0);
        for (int r = 0; r < BLOCKS / RUN; r++) {
            a.sendEntriesAndBlocks(img, BS, (long) r * RUN, (long) (r + 1) * RUN, true, null);
            if (checkSpill && r == 5) {
                assertThat(spillFiles()).as("past its bound the session's finished entries are on disk").hasSize(1);
            }
        }
        a.send(new Commit(img.length));
        return a.expect(Committed.class);
    }

    @Test
    void boundedSession_commitsRestoresAndCleansUp() throws IOException {
        byte[] v1 = image(BLOCKS, 1);
        byte[] v2 = image(BLOCKS, 1);
        for (int i = 3; i < BLOCKS; i += 301) {
            v2[i * BS + 200] ^= 0x33; // sparse changes for the second, full-mode backup
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            Committed c1 = backupRunByRun(a, "big", v1, true);
            assertThat(spillFiles()).as("commit deletes the spill file").isEmpty();
            assertThat(c1.sentBlocks()).as("every distinct block uploaded once, also a duplicate of a checkpointed one")
                    .isEqualTo(distinctNonZero(v1));
            assertThat(c1.changedBlocks()).isEqualTo(nonZero(v1));
            Committed c2 = backupRunByRun(a, "big", v2, false);
            assertThat(c2.sequence()).isEqualTo(2);
            assertThat(spillFiles()).isEmpty();
            assertThat(a.restore("big", 1).image()).as("snapshot 1 restores bit for bit").isEqualTo(v1);
            assertThat(a.restore("big", 2).image()).as("snapshot 2 restores bit for bit").isEqualTo(v2);
        }
    }

    @Test
    void abandonedSession_leavesNoSpillFileAndNothingVisible() throws Exception {
        byte[] img = image(BLOCKS, 2);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("dropped", BS, img.length, 0);
            for (int r = 0; r < 8; r++) {
                a.sendEntriesAndBlocks(img, BS, (long) r * RUN, (long) (r + 1) * RUN, true, null);
            }
            assertThat(spillFiles()).hasSize(1);
        } // disconnect: the server abandons the session
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!spillFiles().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(spillFiles()).as("the abandoned session's spill file is deleted").isEmpty();
        assertThat(harness.catalog().volume(new VolumeId("dropped"))).as("no volume, no snapshot").isEmpty();
    }
}
