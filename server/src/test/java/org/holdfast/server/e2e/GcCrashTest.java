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
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a real server (SIGKILL) while backups commit and GC cycles run every second (grace 3 s, so
 * the blocks of killed sessions are swept while later backups run), restarts it, and at the end:
 * every committed snapshot restores bit for bit, and fsck over the data directory finds no block
 * lost and no disagreement between the GC metadata and the catalog.
 *
 * <p>Iterations from {@code holdfast.crash.iterations} (3 per loop by default, 100 with -Pslow), through {@link CrashLoop}.
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
        CrashLoop loop = new CrashLoop("gc crash loop", 3);
        int iterations = loop.iterations();
        long seed = loop.seed();
        Random random = loop.random();
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
                loop.record(null, false);
                run.await();
                server.start();
                // the agent protocol's listing over one connection: an agent JVM per restart proved nothing more
                List<String> listed = WireProbe.snapshotIds(server, volume);
                assertThat(listed).containsAll(before);
                List<String> appeared = new ArrayList<>(listed);
                appeared.removeAll(before);
                assertThat(appeared).hasSizeLessThanOrEqualTo(1);
                if (!appeared.isEmpty()) {
                    committed.put(appeared.get(0), inFlight);
                    inFlightCommitted++;
                }
                // let a cycle of the restarted server sweep the killed session's blocks (their 3 s grace ran out
                // during the restart, or runs out during the next backup), then 0-1.5 s more, so that the sweeps of
                // some iterations overlap the next backup: waiting for the cycle, not a fixed second, proves it ran
                long cycleWait = System.nanoTime();
                while (!server.log().contains("gc cycle:") && System.nanoTime() - cycleWait < 60_000_000_000L) {
                    Thread.sleep(50);
                }
                assertThat(server.log()).as("a GC cycle ran after the restart:\n%s", server.diagnostics()).contains("gc cycle:");
                Thread.sleep(random.nextInt(1500));
                img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.COMPRESSIBLE);
                backup(server, volume, img, source, state, committed);
            }
            // every snapshot over the wire (one connection, no JVM per snapshot); the agent restores the newest
            RestoreCheck.assertRestoreOverTheWire(server, volume, committed);
            String newest = List.copyOf(committed.keySet()).get(committed.size() - 1);
            new RestoreCheck(agent, work).assertRestores(server, volume, newest, committed.get(newest), BLOCK);
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

    /**
     * Makes sealed data logs mostly dead (64 KiB logs, keep-last=2 retention, every backup rewrites a
     * quarter of the volume) so every GC run (each second) compacts, and kills the server the moment
     * a compaction's {@code .compact} file appears (plus 0-40 ms, so the kill lands in the copy, the
     * switch, or between logs; until one kill has landed in a compaction, a server frozen outside one
     * waits for the next, see {@link #freezeInACompaction}), or, every third iteration, at a random
     * point of a backup. After each restart the newest snapshot is still there; at the end every
     * retained snapshot restores bit for bit and fsck finds no block lost. Prints how many kills
     * landed during a compaction. In iterations
     * 2, 5, ... the server halts itself at a named compaction point instead, {@code compaction.afterCopy}
     * and {@code compaction.afterSwitch} in turn from one the seed picks (see {@link CrashLoop}): the
     * restart after the iteration before is armed there (one start per kill), and may halt before its
     * listing, redoing the interrupted compaction; the listing after the next restart checks the newest
     * snapshot then (a lost snapshot cannot come back). The loop reports the kill-point coverage.
     */
    @Test
    void server_killedDuringCompactions_fsckCleanAndEveryRetainedSnapshotRestores() throws Exception {
        CrashLoop loop = new CrashLoop("compaction crash loop", 3);
        int iterations = loop.iterations();
        long seed = loop.seed();
        Random random = loop.random();
        List<KillPoint> compactionPoints = List.of(KillPoints.COMPACTION_AFTER_COPY, KillPoints.COMPACTION_AFTER_SWITCH);
        String volume = "compaction-crash";
        Path source = work.resolve("volume.img");
        Path state = Files.createDirectories(work.resolve("state"));
        Map<String, Path> known = new LinkedHashMap<>();
        Map<String, String> props = Map.of("holdfast.gc.interval", "1s", "holdfast.gc.grace", "2s",
                "holdfast.gc.default-retention", "keep-last=2", "holdfast.gc.compaction-threshold", "0.8",
                "holdfast.store.log-roll-size", "64KB");
        Path dataDir;
        int killsInCompaction = 0;
        int killsWithCompactFile = 0;
        Recoveries recovered = new Recoveries();
        int logsCompacted = 0;
        String newest;
        List<String> retained;
        Path inFlight = null;
        try (ServerProcess server = ServerProcess.start(work.resolve("server"), "exact", props, logs)) {
            dataDir = server.dataDir();
            Path logsDir = dataDir.resolve("data");
            VolumeImage img = VolumeImage.generate(seed, 4 * MIB);
            newest = null;
            for (int i = 0; i < 3; i++) { // history to expire: the first runs already find dead logs
                img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.RANDOM);
                newest = backupKnown(server, volume, img, source, state, known);
            }
            for (int it = 1; it <= iterations; it++) {
                // iterations 2, 5, ...: the restart after the iteration before was armed at a compaction point (the copy
                // or the switch in turn), so the server halts itself there; it may have halted already, during that restart
                KillPoint armed = armedIn(it, compactionPoints, seed);
                if (armed != null && !server.isAlive()) {
                    assertThat(server.awaitKillPoint(Duration.ZERO)).as("the armed server halted at %s:\n%s", armed,
                            server.diagnostics()).isTrue();
                    loop.record(armed, true);
                    String killedLog = server.log();
                    boolean compactFile = compactFilePresent(logsDir);
                    logsCompacted += killedLog.split("compacted data log", -1).length - 1;
                    killsWithCompactFile += compactFile ? 1 : 0;
                    killsInCompaction += inCompaction(killedLog) || compactFile ? 1 : 0;
                    newest = restartAndList(server, volume, it < iterations ? armedIn(it + 1, compactionPoints, seed) : null, known,
                            inFlight, newest, recovered);
                    System.out.println("[e2e] compaction crash loop iteration " + it + ": halted at " + armed.name()
                            + " in the restart, before a backup");
                    continue;
                }
                img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.RANDOM);
                img.scribble(20);
                img.writeTo(source);
                inFlight = work.resolve("inflight-" + it + ".img");
                Files.copy(source, inFlight);
                AgentProcess.Running run = agent.start(AgentProcess.backupArgs(server, volume, source, state,
                        "--block-size", String.valueOf(BLOCK)));
                if (armed != null) {
                    // started with a compaction point armed: the server halts itself there
                    boolean halted = server.awaitKillPoint(Duration.ofSeconds(120)); // returns at the halt: long only when slow
                    if (!halted) {
                        assertThat(server.kill()).as("server died otherwise:\n%s", server.diagnostics()).isTrue();
                    }
                    loop.record(armed, halted);
                } else if (it % 3 == 0) {
                    long dataBefore = server.dataLogBytes();
                    double share = 0.2 + 0.8 * random.nextDouble();
                    long start = System.nanoTime();
                    while (run.isAlive() && server.dataLogBytes() - dataBefore < share * MIB
                            && System.nanoTime() - start < 60_000_000_000L) {
                        Thread.sleep(5);
                    }
                } else {
                    freezeInACompaction(server, logsDir, random, killsInCompaction == 0);
                }
                if (armed == null) {
                    assertThat(server.kill()).as("server died before the kill:\n%s", server.diagnostics()).isTrue();
                    loop.record(null, false);
                }
                boolean compactFile = compactFilePresent(logsDir);
                String killedLog = server.log();
                boolean midCompaction = inCompaction(killedLog);
                logsCompacted += killedLog.split("compacted data log", -1).length - 1;
                killsWithCompactFile += compactFile ? 1 : 0;
                killsInCompaction += midCompaction || compactFile ? 1 : 0;
                run.await();
                newest = restartAndList(server, volume, it < iterations ? armedIn(it + 1, compactionPoints, seed) : null, known,
                        inFlight, newest, recovered);
            }
            img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.COMPRESSIBLE);
            newest = backupKnown(server, volume, img, source, state, known);
            GcCycles.awaitMore(server, 2); // more GC runs over the restarted server: at least one whole, not a fixed wait
            // the agent protocol's listing over one connection (the agent restores the newest below)
            retained = WireProbe.snapshotIds(server, volume);
            assertThat(retained).contains(newest).hasSizeGreaterThanOrEqualTo(2);
            assertThat(known.keySet()).containsAll(retained);
            // every retained snapshot over the wire (one connection); the agent itself restores the newest
            Map<String, Path> expected = new LinkedHashMap<>();
            retained.forEach(id -> expected.put(id, known.get(id)));
            RestoreCheck.assertRestoreOverTheWire(server, volume, expected);
            new RestoreCheck(agent, work).assertRestores(server, volume, newest, known.get(newest), BLOCK);
            logsCompacted += server.log().split("compacted data log", -1).length - 1;
            // what an operator sees: the status and the counters name the compaction
            String status = server.get("/api/v1/gc/status").body();
            com.fasterxml.jackson.databind.JsonNode st = new com.fasterxml.jackson.databind.ObjectMapper().readTree(status);
            assertThat(st.get("compaction").get("runs").asLong()).as(status).isPositive();
            assertThat(st.get("lastRun").get("compaction").has("bytesReclaimed")).as(status).isTrue();
            String metrics = server.get("/actuator/prometheus").body();
            assertThat(metrics).contains("holdfast_gc_compaction_reclaimed_bytes_total");
            System.out.println("[e2e] gc status after the loop: " + status);
            // the scheduled cycles are jobs too, and an on-demand fsck job over the crashed-and-restarted store finds no loss
            String cycles = server.get("/api/v1/jobs?kind=gc-cycle&state=succeeded&limit=5").body();
            assertThat(cycles).as(cycles).contains("\"submittedBy\":\"schedule\"");
            com.fasterxml.jackson.databind.JsonNode fsckJob = server.runJob("/api/v1/gc/fsck", java.time.Duration.ofMinutes(2));
            assertThat(fsckJob.get("state").asText()).as(fsckJob.toString()).isEqualTo("succeeded");
            assertThat(fsckJob.get("result").get("dataLoss").asBoolean()).as(fsckJob.toString()).isFalse();
        }
        System.out.printf("[e2e] compaction crash loop done: %d iterations, %d logs compacted, %d kills during a compaction (%d with"
                + " a .compact file on disk); restarts finished %d interrupted compactions (rename), cleared %d intents (switch complete) and"
                + " discarded %d copies (no switch); %d snapshots retained%n",
                iterations, logsCompacted, killsInCompaction, killsWithCompactFile, recovered.byRename, recovered.intentOnly,
                recovered.byDiscard, retained.size());
        assertThat(killsInCompaction).as("kills that landed during a compaction").isPositive();
        loop.report(compactionPoints::contains);
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir());
             DataStore store = DataStore.open(DataStore.Settings.defaults(dd.dataDir()), db);
             ExactFingerprintIndex index = new ExactFingerprintIndex(db)) {
            Catalog catalog = new Catalog(db);
            try (GcService gc = GcService.open(new GcService.Settings(dd.subdirectory("gc"), BoscSettings.defaults(),
                    Duration.ofSeconds(2), "keep-last=2", 64), catalog, store, index, Clock.systemUTC(), Object::new)) {
                FsckReport f = gc.fsck();
                System.out.print("[e2e] " + f.toText());
                assertThat(f.dataLoss()).as(f.toText()).isFalse();
                assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
                // the server's last GC runs may have expired one more of the listed (and restored) snapshots
                int inCatalog = catalog.snapshots(new org.holdfast.common.id.VolumeId(volume)).size();
                assertThat(inCatalog).isBetween(1, retained.size());
                assertThat(f.snapshotsChecked()).isEqualTo(inCatalog);
            }
            // every block that still has a location reads back and passes its checksum
            List<Long> pbns = new ArrayList<>();
            store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> pbns.add(pbn) || true);
            StoredBlock b = new StoredBlock();
            for (long p : pbns) {
                store.read(p, b);
            }
            System.out.println("[e2e] " + pbns.size() + " stored blocks read back, every checksum right");
        }
    }

    /**
     * Iterations 2, 5, 8, ... halt at a compaction point, each point in turn from one the seed picks
     * (a CI run's single armed iteration takes either, a long run takes both alike); null in the others.
     */
    private static KillPoint armedIn(int iteration, List<KillPoint> points, long seed) {
        return iteration % 3 == 2 ? points.get((int) Math.floorMod(iteration / 3 + seed, (long) points.size())) : null;
    }

    /** What the restarts of the compaction crash loop finished or discarded, from their logs. */
    private static final class Recoveries {
        int byRename;
        int intentOnly;
        int byDiscard;
    }

    /**
     * Restarts the killed server, armed at {@code next} if not null, and lists the volume: the newest
     * snapshot is there, and at most one more, from the backup in flight at the kill ({@code inFlight}'s
     * image). A server that halts at {@code next} before the listing is listed after the restart that
     * follows. Answers the newest snapshot.
     */
    private static String restartAndList(ServerProcess server, String volume, KillPoint next, Map<String, Path> known, Path inFlight,
                                         String newest, Recoveries recovered) throws InterruptedException {
        if (next != null) {
            server.armKillPoint(next, 1);
        }
        server.start();
        String restartLog = server.log();
        recovered.byRename += restartLog.contains("finishing the interrupted compaction") ? 1 : 0;
        recovered.intentOnly += restartLog.contains("its switch was complete") ? 1 : 0;
        recovered.byDiscard += restartLog.contains("its compaction was interrupted before the switch") ? 1 : 0;
        List<String> listed = CrashLoop.snapshotIdsUnlessHalted(server, volume, next);
        if (listed == null) {
            return newest;
        }
        assertThat(listed).contains(newest);
        List<String> appeared = new ArrayList<>(listed);
        appeared.removeAll(known.keySet());
        assertThat(appeared).hasSizeLessThanOrEqualTo(1);
        if (!appeared.isEmpty()) {
            assertThat(inFlight).as("snapshot %s appeared from no backup in flight", appeared.get(0)).isNotNull();
            known.put(appeared.get(0), inFlight);
            return appeared.get(0);
        }
        return newest;
    }

    /**
     * Waits for a compaction to run (its {@code .compact} file on disk), lets it go on 0-40 ms and
     * freezes the server (SIGSTOP) there, so the kill that follows lands in the copy, the switch or
     * between logs. With {@code mustLand} (no kill of this loop landed in a compaction yet) a frozen
     * server that is not in one (no {@code .compact} file, and the log's last "compacting" line has
     * its "compacted" after it) thaws and waits for the next log's compaction, for up to 60 s:
     * timing alone once missed every compaction on a loaded machine (the copy and switch of a 64 KiB
     * log take a few milliseconds), and the loop asserts that some kill landed in one.
     */
    private static void freezeInACompaction(ServerProcess server, Path logsDir, Random random, boolean mustLand) throws Exception {
        long start = System.nanoTime();
        while (server.isAlive() && System.nanoTime() - start < 60_000_000_000L) {
            if (!compactFilePresent(logsDir)) {
                Thread.sleep(1);
                continue;
            }
            Thread.sleep(random.nextInt(3) == 0 ? 0 : random.nextInt(40));
            server.freeze();
            if (!mustLand || compactFilePresent(logsDir) || inCompaction(server.log())) {
                return;
            }
            server.thaw();
        }
    }

    /** True if the server's log says it started compacting a data log and has not finished it. */
    private static boolean inCompaction(String log) {
        return log.lastIndexOf("compacting data log") > log.lastIndexOf("compacted data log");
    }

    private static boolean compactFilePresent(Path logsDir) throws java.io.IOException {
        if (!Files.isDirectory(logsDir)) {
            return false;
        }
        try (var s = Files.list(logsDir)) {
            return s.anyMatch(p -> p.getFileName().toString().endsWith(".compact"));
        } catch (java.nio.file.NoSuchFileException e) {
            return false;
        }
    }

    private String backupKnown(ServerProcess server, String volume, VolumeImage img, Path source, Path state,
                               Map<String, Path> known) throws Exception {
        img.writeTo(source);
        BackupSummary s = agent.backup(server, volume, source, state, "--block-size", String.valueOf(BLOCK));
        Path expected = work.resolve("expected-" + known.size() + "-" + System.nanoTime() + ".img");
        Files.copy(source, expected);
        known.put(s.snapshotId(), expected);
        return s.snapshotId();
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
