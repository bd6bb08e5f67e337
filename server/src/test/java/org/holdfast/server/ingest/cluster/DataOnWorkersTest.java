package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data on workers end to end in one JVM: a master (catalog, its own data store, the ingest on
 * loopback) whose dedup index is its two workers' (remote, over TLS) and whose blocks live in the
 * workers' range stores ({@link WorkerBlockHome}), each worker node serving its range from a store
 * on disk. Backups store nothing in the master's data logs, restores read back byte for byte from
 * the workers, and a worker lost mid-backup fails that backup with nothing committed.
 */
class DataOnWorkersTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;
    private TlsWorkerNodes nodes;
    private IngestHarness master;
    private int up = 2;

    @BeforeEach
    void start() {
        SungemSettings settings = SungemFingerprintIndexTest.smallSettings();
        nodes = new TlsWorkerNodes(dir.resolve("cluster"), 2, settings, Clock.systemUTC(), true);
        master = IngestHarness.withBlocks(dir.resolve("master"),
                (db, d) -> new RemoteFingerprintIndex(nodes.server().dedupLinks(), nodes.registry(), ClusterMode.NEAREST, settings),
                () -> new WorkerBlockHome(nodes.server().rangeStores()));
    }

    @AfterEach
    void stop() {
        if (master != null) {
            master.close();
        }
        if (nodes != null) {
            nodes.close();
        }
    }

    private static byte[] image(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    /**
     * Waits until every node not closed has its range store up: on a loaded machine a worker may
     * miss heartbeats and register again, and its blocks are unavailable meanwhile (as designed).
     */
    private void awaitWorkersUp() {
        await().atMost(Duration.ofSeconds(30)).until(() -> nodes.server().rangeStores().upAt(up - 1) != null);
    }

    private long workerBlocks(int node) {
        DataStore s = nodes.rangeData().get(node).store();
        return s == null ? 0 : s.stats().appendedBlocks();
    }

    private void assertRestores(String volume, long seq, byte[] expected) {
        awaitWorkersUp();
        try (AgentDriver a = new AgentDriver(master.port())) {
            a.hello();
            assertThat(a.restore(volume, seq).image()).as("%s@%d restores byte for byte from the workers", volume, seq).isEqualTo(expected);
        }
    }

    @Test
    void backupTwoVolumes_dataOnWorkers_blocksOnTheWorkersNoneOnTheMasterAndRestoreByteIdentical() {
        byte[] a = image(1, 1500);
        byte[] b = image(2, 1500);
        long stored = 0;
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            Committed ca = agent.backup("a", a, BS, false);
            Committed cb = agent.backup("b", b, BS, true);
            stored = ca.newBlocks() + cb.newBlocks();
        }
        assertThat(stored).as("every block is new").isEqualTo(3000);
        assertThat(master.store().stats().appendedBlocks()).as("the master's data logs hold none of them").isZero();
        assertThat(master.store().nextPbn()).as("the master handed out no PBN").isEqualTo(1);
        assertThat(workerBlocks(0) + workerBlocks(1)).as("the workers' range stores hold every new block once").isEqualTo(stored);
        assertThat(workerBlocks(0)).as("node 0 stored some").isPositive();
        assertThat(workerBlocks(1)).as("node 1 stored some").isPositive();
        assertRestores("a", 1, a);
        assertRestores("b", 1, b);

        // an incremental compares with the parent's fingerprints, which live on the workers
        byte[] a2 = a.clone();
        a2[7 * BS] ^= 1;
        awaitWorkersUp();
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            Committed c = agent.backup("a", a2, BS, false);
            assertThat(c.newBlocks()).as("only the changed block is new").isEqualTo(1);
        }
        assertRestores("a", 2, a2);
        assertRestores("a", 1, a);
    }

    @Test
    void backupFrames_dataOnWorkers_eachFrameStoredOnAWorkerAndRestoredByteIdentical() {
        byte[] img = new byte[600 * BS];
        Random r = new Random(5);
        for (int i = 0; i < img.length; i += 64) {
            img[i] = (byte) r.nextInt(); // compresses, and every block differs
        }
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            Committed c = agent.backupFrames("f", img, BS, 8);
            assertThat(c.newBlocks()).isEqualTo(600);
        }
        assertThat(master.store().stats().appendedBlocks()).as("the master's data logs hold none").isZero();
        assertThat(workerBlocks(0) + workerBlocks(1)).as("every member in a worker's range store").isEqualTo(600);
        assertRestores("f", 1, img);
    }

    @Test
    void backup_storingWorkerClosedMidBackup_failsWithNothingCommittedAndTheNextBackupSucceeds() {
        byte[] seed = image(3, 200);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            agent.backup("seed", seed, BS, false); // both workers' range stores open
        }
        long before0 = workerBlocks(0);
        long before1 = workerBlocks(1);
        byte[] c = image(4, 1000);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            agent.begin("c", BS, c.length, 0);
            agent.sendEntriesAndBlocks(c, BS, 0, 500, false, null);
            await().atMost(Duration.ofSeconds(20)).until(() -> workerBlocks(0) + workerBlocks(1) - before0 - before1 == 500);
            int lost = workerBlocks(0) > before0 ? 0 : 1; // a worker this backup stored on
            nodes.connector(lost).close();
            up = 1;
            agent.send(new Commit(c.length));
            ErrorMessage e = agent.expectErrorAndStop();
            assertThat(e.message()).as("names the lost worker and says to run again").contains("lost").contains("again");
        }
        assertThat(master.catalog().volume(new VolumeId("c")).map(VolumeRecord::latestSequence).orElse(0L))
                .as("nothing of the failed backup is committed").isZero();

        await().atMost(Duration.ofSeconds(30)).until(() -> nodes.server().rangeStores().upAt(1) == null);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            Committed next = agent.backup("c", c, BS, false);
            assertThat(next.sequence()).isEqualTo(1);
        }
        assertRestores("c", 1, c);
        assertThat(master.store().stats().appendedBlocks()).as("the master's data logs hold none").isZero();
    }
}
