package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.SnapshotList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The full backup → restore flow through a real loopback socket and the common codec. */
class BackupRestoreLoopbackTest {
    private static final int BS = 4096;

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

    static byte[] image(long seed, int bytes) {
        byte[] b = new byte[bytes];
        Random r = new Random(seed);
        r.nextBytes(b);
        // a few zero blocks and a repeated block
        Arrays.fill(b, 0, Math.min(bytes, 3 * BS), (byte) 0);
        if (bytes > 20 * BS) {
            System.arraycopy(b, 10 * BS, b, 12 * BS, BS);
            System.arraycopy(b, 10 * BS, b, 15 * BS, BS);
        }
        return b;
    }

    private void assertRestores(AgentDriver a, String volume, long seq, byte[] expected) {
        AgentDriver.Restored r = a.restore(volume, seq);
        assertThat(r.info().volumeBytes()).isEqualTo(expected.length);
        assertThat(r.image()).as("snapshot %d of %s restores bit for bit", seq, volume).isEqualTo(expected);
    }

    @Test
    void backup_evolvingVolume_everySnapshotRestoresBitForBit() {
        List<byte[]> versions = new ArrayList<>();
        byte[] v1 = image(1, 300 * BS + 1000); // odd tail
        versions.add(v1);
        byte[] v2 = v1.clone();
        for (int i = 0; i < 5; i++) {
            v2[(50 + i * 37) * BS + 11] ^= 0x5a; // five changed blocks
        }
        Arrays.fill(v2, 100 * BS, 120 * BS, (byte) 0); // zeroed region
        versions.add(v2);
        byte[] v3 = Arrays.copyOf(v2, 200 * BS + 123); // shrink
        versions.add(v3);
        byte[] v4 = Arrays.copyOf(v3, 400 * BS); // grow: the old tail must not come back
        byte[] tail = image(4, 50 * BS);
        System.arraycopy(tail, 0, v4, 350 * BS, 50 * BS);
        versions.add(v4);
        versions.add(v4.clone()); // no change

        List<Committed> commits = new ArrayList<>();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            for (int i = 0; i < versions.size(); i++) {
                commits.add(a.backup("vol", versions.get(i), BS, i % 2 == 0));
            }
            Committed first = commits.get(0);
            assertThat(first.sentBlocks()).as("the repeated block is uploaded once; zero blocks never")
                    .isEqualTo(301 - 3 - 2);
            assertThat(first.logicalBytes()).isEqualTo(v1.length);
            Committed second = commits.get(1);
            assertThat(second.sentBlocks()).isEqualTo(5);
            assertThat(second.changedBlocks()).isEqualTo(5 + 20);
            assertThat(commits.get(2).changedBlocks()).as("shrink: 100 cut-off blocks become zero, the new partial tail block changes")
                    .isEqualTo(100 + 1);
            assertThat(commits.get(4).changedBlocks()).isZero();
            assertThat(commits.get(4).sentBlocks()).isZero();
            for (int i = 0; i < versions.size(); i++) {
                assertRestores(a, "vol", i + 1, versions.get(i));
            }
            SnapshotList list = a.list("vol");
            assertThat(list.snapshots()).extracting(s -> s.sequence()).containsExactly(1L, 2L, 3L, 4L, 5L);
        }
    }

    @Test
    void backup_secondVolumeWithSameContent_uploadsNothing() {
        byte[] img = image(7, 64 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            Committed c1 = a.backup("a", img, BS, true);
            Committed c2 = a.backup("b", img, BS, false);
            assertThat(c1.newBlocks()).isPositive();
            assertThat(c2.sentBlocks()).isZero();
            assertThat(c2.newBlocks()).isZero();
            assertRestores(a, "b", 1, img);
        }
    }

    @Test
    void backup_incrementalAfterRestart_continuesAndOldSnapshotsRestore() {
        byte[] v1 = image(9, 80 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("vol", v1, BS, true);
        }
        long pbnBefore = harness.store().nextPbn();
        harness.restart();
        assertThat(harness.store().nextPbn()).as("PBNs continue above all handed out").isGreaterThanOrEqualTo(pbnBefore);
        byte[] v2 = v1.clone();
        v2[5 * BS] ^= 1;
        try (AgentDriver a = harness.agent()) {
            a.hello();
            BackupReady ready = a.begin("vol", BS, v2.length, 1);
            assertThat(ready.mode()).isEqualTo(BackupMode.INCREMENTAL);
            assertThat(ready.parentSequence()).isEqualTo(1);
            int asked = a.sendEntriesAndBlocks(v2, BS, 5, 6, true, null); // only the changed LBN
            assertThat(asked).isEqualTo(1);
            a.send(new Commit(v2.length));
            Committed c = a.expect(Committed.class);
            assertThat(c.sequence()).isEqualTo(2);
            assertThat(c.changedBlocks()).isEqualTo(1);
            assertRestores(a, "vol", 1, v1);
            assertRestores(a, "vol", 2, v2);
        }
    }

    @Test
    void backup_sameFingerprintTwiceInOneSession_askedOnce() {
        byte[] img = new byte[8 * BS];
        byte[] block = new byte[BS];
        new Random(3).nextBytes(block);
        for (int i = 0; i < 8; i++) {
            System.arraycopy(block, 0, img, i * BS, BS);
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("dup", BS, img.length, 0);
            // two runs, so the repeat spans runs as well as segments
            a.send(new Entries(0, 4, fps(img, 0, 4), new long[4]));
            a.send(new Entries(4, 4, fps(img, 4, 4), new long[4]));
            Need n1 = a.expect(Need.class);
            Need n2 = a.expect(Need.class);
            assertThat(n1.neededCount() + n2.neededCount()).isEqualTo(1);
            assertThat(n1.isNeeded(0)).isTrue();
            var b = org.holdfast.common.protocol.Blocks.builder(a.alloc(), BS);
            b.add(0, org.holdfast.common.protocol.PayloadCodec.RAW, block, 0, BS);
            a.send(b.build());
            a.send(new Commit(img.length));
            Committed c = a.expect(Committed.class);
            assertThat(c.newBlocks()).isEqualTo(1);
            assertThat(c.changedBlocks()).isEqualTo(8);
            assertRestores(a, "dup", 1, img);
        }
    }

    @Test
    void backup_manyAgentsOnDifferentVolumesAtOnce_allCommitAndRestore() throws Exception {
        int agents = 4;
        List<CompletableFuture<byte[]>> done = new ArrayList<>();
        for (int i = 0; i < agents; i++) {
            int n = i;
            done.add(CompletableFuture.supplyAsync(() -> {
                byte[] img = image(100 + n, 500 * BS);
                try (AgentDriver a = harness.agent()) {
                    a.hello();
                    a.backup("par-" + n, img, BS, n % 2 == 0);
                }
                return img;
            }));
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            for (int i = 0; i < agents; i++) {
                assertRestores(a, "par-" + i, 1, done.get(i).get());
            }
        }
    }

    @Test
    void restore_largeVolumeThroughSmallFrames_streamsAllBlocksInOrder() {
        byte[] img = image(11, 3000 * BS); // more than two frames of 1024 blocks
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("big", img, BS, true);
            AgentDriver.Restored r = a.restore("big", 1);
            assertThat(r.frames()).isGreaterThanOrEqualTo(3);
            assertThat(r.blocksSent()).isEqualTo(3000);
            assertThat(r.image()).isEqualTo(img);
        }
    }

    static byte[] fps(byte[] img, int fromLbn, int n) {
        byte[] out = new byte[n * 32];
        var h = new org.holdfast.common.hash.BlockHasher();
        for (int i = 0; i < n; i++) {
            h.fingerprint(img, (fromLbn + i) * BS, BS, out, i * 32);
        }
        return out;
    }
}
