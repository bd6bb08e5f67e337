package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import org.holdfast.client.cli.HoldfastAgent;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.SegmentAnswer;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.ingest.TestTokens;
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
 * the workers, and a worker lost mid-backup fails that backup with nothing committed. A block goes to
 * the worker whose index recorded it, by worker id, whatever registers or drops between its lookup
 * and its store: every PBN a worker's index names lies in that worker's range.
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

    /** Node {@code node}'s registration (node names are "w" + node): its worker id and PBN range. */
    private WorkerView view(int node) {
        return nodes.registry().workers().stream().filter(v -> v.nodeName().equals("w" + node)).findFirst().orElseThrow();
    }

    /** The node with the lower worker id: the master numbers it 0 while both are up. */
    private int lowerIdNode() {
        return view(0).workerId() < view(1).workerId() ? 0 : 1;
    }

    /**
     * Looks {@code image}'s blocks up in each node's own dedup engine and asserts that every PBN its
     * index answers lies in that node's range (the index that recorded an entry and the range its
     * PBN lies in are the same worker's); returns how many PBNs each node's index answered.
     */
    private long[] assertIndexesNameOwnRanges(byte[] image) {
        int n = image.length / BS;
        byte[] fps = new byte[n * 32];
        BlockHasher hasher = new BlockHasher();
        for (int i = 0; i < n; i++) {
            hasher.fingerprint(image, i * BS, BS, fps, i * 32);
        }
        long[] found = new long[2];
        for (int node = 0; node < 2; node++) {
            PbnRange range = view(node).range();
            long stream = Long.MAX_VALUE - node; // a stream of this check's own, never a session's
            for (int from = 0; from < n; from += 256) {
                int c = Math.min(256, n - from);
                SegmentAnswer a = nodes.engines().get(node).lookup(new SegmentLookup(stream, Arrays.copyOfRange(fps, from * 32,
                        (from + c) * 32), c)).join();
                for (int i = 0; i < c; i++) {
                    long p = a.pbns()[i];
                    if (p > 0) {
                        assertThat(range.contains(p)).as("node %d's index names PBN %d: it must lie in its range %s", node, p, range)
                                .isTrue();
                        found[node]++;
                    }
                }
            }
            nodes.engines().get(node).closeStream(stream);
        }
        return found;
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
        long[] fromA = assertIndexesNameOwnRanges(a);
        long[] fromB = assertIndexesNameOwnRanges(b);
        assertThat(fromA[0] + fromA[1] + fromB[0] + fromB[1]).as("the indexes name the backups' blocks").isPositive();
    }

    @Test
    void backup_lowerIdWorkersDataCallsLostBetweenLookupAndStore_failsWithNothingStoredOnTheOtherWorker() {
        int low = lowerIdNode();
        int high = 1 - low;
        long lowId = view(low).workerId();
        // a fresh cluster's first new data goes home to the least loaded worker: a tie, so the lower id's
        byte[] c = image(6, 300);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            agent.begin("c", BS, c.length, 0);
            // its dedup link stays up; positions among the data links up would now name the other worker
            agent.sendEntriesAndBlocks(c, BS, 0, 300, false, null,
                    () -> nodes.server().rangeStores().up(lowId).lost("a data call timed out (test)"));
            agent.send(new Commit(c.length));
            ErrorMessage e = agent.expectErrorAndStop();
            assertThat(e.message()).as("names the storing worker and says to run again").contains("data worker w" + low + ", id " + lowId)
                    .contains("again");
            assertThat(e.code()).as("transient: the agent exits 8 and its daemon retries").isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
        }
        assertThat(workerBlocks(high)).as("nothing stored on the other worker, whose index never recorded it").isZero();
        assertThat(workerBlocks(low)).isZero();
        assertThat(master.catalog().volume(new VolumeId("c")).map(VolumeRecord::latestSequence).orElse(0L))
                .as("nothing of the failed backup is committed").isZero();
    }

    /**
     * The real agent, over the master's agent port: exit 8 and error "transient" while the workers are
     * away (that the next backup then commits is backup_storingWorkerClosedMidBackup_...'s).
     */
    @Test
    void agentBackup_workersAway_exits8Transient_nothingCommitted() throws Exception {
        Path source = Files.write(dir.resolve("e.img"), image(8, 64));
        nodes.connector(0).close();
        nodes.connector(1).close();
        await().atMost(Duration.ofSeconds(30)).until(() -> nodes.server().dedupLinks().workers().isEmpty());

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] args = {"backup", "--server", "127.0.0.1:" + master.port(), "--no-tls", "--no-daemon", "--token", TestTokens.DEFAULT_AGENT,
            "--volume", "e", "--source", source.toString(), "--state-dir", dir.resolve("state").toString(), "--json"};
        int exit = HoldfastAgent.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(exit).as("%s", err).isEqualTo(8);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("holdfast-agent: error: server refused: WORKER_UNAVAILABLE: no dedup worker")
                .contains("run the backup again");
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"exitCode\":8,\"error\":\"transient\"");
        assertThat(master.catalog().volume(new VolumeId("e")).map(VolumeRecord::latestSequence).orElse(0L)).isZero();
    }

    @Test
    void backup_lowerIdWorkerRegistersAgainBetweenLookupAndStore_blocksGoToTheWorkerWhoseIndexRecordsThem() {
        int low = lowerIdNode();
        int high = 1 - low;
        long lowId = view(low).workerId();
        nodes.connector(low).close();
        await().atMost(Duration.ofSeconds(30)).until(() -> nodes.server().dedupLinks().workers().size() == 1
                && nodes.server().rangeStores().up(lowId) == null);
        byte[] d = image(7, 300);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            agent.begin("d", BS, d.length, 0);
            // looked up with the higher id alone (numbered 0 then); the lower id is back, numbered 0, before the blocks
            agent.sendEntriesAndBlocks(d, BS, 0, 300, false, null, () -> {
                nodes.reconnect(low);
                await().atMost(Duration.ofSeconds(30)).until(() -> nodes.server().rangeStores().up(lowId) != null
                        && nodes.server().dedupLinks().workers().size() == 2);
            });
            agent.send(new Commit(d.length));
            Committed c = agent.expect(Committed.class);
            assertThat(c.newBlocks()).isEqualTo(300);
        }
        assertThat(workerBlocks(high)).as("every block on the worker that looked it up and records it").isEqualTo(300);
        assertThat(workerBlocks(low)).as("none on the worker that registered again").isZero();
        assertThat(assertIndexesNameOwnRanges(d)[high]).as("the storing worker's index names the blocks").isPositive();
        assertRestores("d", 1, d);
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
        long[] found = assertIndexesNameOwnRanges(img);
        assertThat(found[0] + found[1]).as("the indexes name the frames' members").isPositive();
    }

    @Test
    void backup_blockRepeatedInASegmentPlacedOnTheOtherWorker_recordedByTheWorkerThatStoredIt() {
        int low = lowerIdNode();
        int high = 1 - low;
        byte[] seed = image(8, 256);
        byte[] small = image(9, 8);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            agent.backup("seed", seed, BS, false); // home of a fresh cluster: the lower id
            agent.backup("small", small, BS, false); // its lookup hears the loads: home is the other worker now
        }
        assertThat(workerBlocks(low)).as("the seed on the lower id").isEqualTo(256);
        assertThat(workerBlocks(high)).as("the next new data on the other").isEqualTo(8);
        // segment 0: new blocks, home (the higher id) stores them; segment 1: the seed again (on the lower id) but
        // for LBN 300, a repeat of LBN 5, placed beside the seed: its PBN is LBN 5's, in the higher id's range
        byte[] t = new byte[512 * BS];
        System.arraycopy(image(10, 256), 0, t, 0, 256 * BS);
        System.arraycopy(seed, 0, t, 256 * BS, 256 * BS);
        System.arraycopy(t, 5 * BS, t, 300 * BS, BS);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            Committed c = agent.backup("t", t, BS, false);
            assertThat(c.newBlocks()).as("segment 0 only; LBN 300 refers to LBN 5's block").isEqualTo(256);
        }
        assertThat(workerBlocks(high)).as("segment 0 on the higher id").isEqualTo(8 + 256);
        long[] found = assertIndexesNameOwnRanges(t);
        assertThat(found[high]).as("the higher id's index names segment 0").isPositive();
        assertThat(found[low]).as("the lower id's index names the seed").isPositive();
        assertRestores("t", 1, t);
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
            assertThat(e.code()).isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
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
