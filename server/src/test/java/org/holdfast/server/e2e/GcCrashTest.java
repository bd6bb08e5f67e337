package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a real server (SIGKILL) while backups commit and GC cycles run every second (grace 3 s, so
 * the blocks of killed sessions are swept while later backups run), restarts it, and at the end:
 * every committed snapshot restores bit for bit, and fsck over the data directory finds no block
 * lost and no disagreement between the GC metadata and the catalog.
 *
 * <p>Iterations from {@code holdfast.crash.iterations} (5 by default, 100 with -Pslow).
 */
class GcCrashTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;

    private final LogDir logs = new LogDir("GcCrashTest");
    private final AgentProcess agent = new AgentProcess(logs);

    @TempDir
    Path work;

    @Test
    void server_killedDuringCommitsAndSweeps_fsckCleanAndEverySnapshotRestores() throws Exception {
        int iterations = Integer.getInteger("holdfast.crash.iterations", 5);
        long seed = Long.getLong("holdfast.crash.seed", System.nanoTime());
        System.out.println("[e2e] gc crash loop: " + iterations + " iterations, seed " + seed);
        Random random = new Random(seed);
        String volume = "gc-crash";
        Path source = work.resolve("volume.img");
        Path state = Files.createDirectories(work.resolve("state"));
        Map<String, Path> committed = new LinkedHashMap<>();
        Map<String, String> props = Map.of("holdfast.gc.interval", "1s", "holdfast.gc.grace", "3s",
                "holdfast.gc.default-retention", "1h");
        Path dataDir;
        String serverLog;
        int inFlightCommitted = 0;
        try (ServerProcess server = ServerProcess.start(work.resolve("server"), "exact", props, logs)) {
            dataDir = server.dataDir();
            VolumeImage img = VolumeImage.generate(seed, 4 * MIB);
            backup(server, volume, img, source, state, committed);
            for (int it = 1; it <= iterations; it++) {
                for (int i = 0; i < 2; i++) {
                    img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.RANDOM);
                }
                img.scribble(20);
                img.writeTo(source);
                Path inFlight = work.resolve("inflight-" + it + ".img");
                Files.copy(source, inFlight);
                List<String> before = new ArrayList<>(committed.keySet());
                AgentProcess.Running run = agent.start(AgentProcess.backupArgs(server, volume, source, state,
                        "--block-size", String.valueOf(BLOCK)));
                // kill somewhere in the upload, the commit, or the GC cycles right after it: wait until
                // a random share (30 % to 110 %) of the change reached the data logs, then 0-500 ms more
                double share = 0.3 + 0.8 * random.nextDouble();
                long dataBefore = server.dataDirBytes();
                long start = System.nanoTime();
                while (run.isAlive() && server.dataDirBytes() - dataBefore < share * 2 * MIB
                        && System.nanoTime() - start < 60_000_000_000L) {
                    Thread.sleep(5);
                }
                Thread.sleep(random.nextInt(500));
                assertThat(server.kill()).as("server died before the kill:\n%s", server.diagnostics()).isTrue();
                run.await();
                server.start();
                List<String> listed = agent.snapshots(server, volume).stream().map(SnapshotInfo::id).toList();
                assertThat(listed).containsAll(before);
                List<String> appeared = new ArrayList<>(listed);
                appeared.removeAll(before);
                assertThat(appeared).hasSizeLessThanOrEqualTo(1);
                if (!appeared.isEmpty()) {
                    committed.put(appeared.get(0), inFlight);
                    inFlightCommitted++;
                }
                // let the grace of the killed session's blocks run out and a cycle sweep them
                Thread.sleep(1000 + random.nextInt(3000));
                img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.COMPRESSIBLE);
                backup(server, volume, img, source, state, committed);
            }
            RestoreCheck restores = new RestoreCheck(agent, work);
            for (Map.Entry<String, Path> c : committed.entrySet()) {
                restores.assertRestores(server, volume, c.getKey(), c.getValue(), BLOCK);
            }
            serverLog = server.log();
        }
        System.out.println("[e2e] gc crash loop done: " + committed.size() + " snapshots, " + inFlightCommitted
                + " committed by a backup the kill interrupted");
        assertThat(serverLog).as("GC cycles ran in the server").contains("gc cycle:");
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir());
             DataStore store = DataStore.open(DataStore.Settings.defaults(dd.dataDir()), db);
             ExactFingerprintIndex index = new ExactFingerprintIndex(db)) {
            Catalog catalog = new Catalog(db);
            try (GcService gc = GcService.open(new GcService.Settings(dd.subdirectory("gc"), BoscSettings.defaults(),
                    Duration.ofSeconds(3), "1h", 64), catalog, store, index, Clock.systemUTC(), Object::new)) {
                FsckReport f = gc.fsck();
                System.out.print("[e2e] " + f.toText());
                assertThat(f.dataLoss()).as(f.toText()).isFalse();
                assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
                assertThat(f.snapshotsChecked()).isEqualTo(committed.size());
            }
        }
    }

    private void backup(ServerProcess server, String volume, VolumeImage img, Path source, Path state,
                        Map<String, Path> committed) throws Exception {
        img.writeTo(source);
        BackupSummary s = agent.backup(server, volume, source, state, "--block-size", String.valueOf(BLOCK));
        Path expected = work.resolve("expected-" + committed.size() + "-" + System.nanoTime() + ".img");
        Files.copy(source, expected);
        committed.put(s.snapshotId(), expected);
    }
}
